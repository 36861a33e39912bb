"""Renders one array of a relayout ParaView view (view_<step>.hdf) to a PNG.

  xvfb-run -a pvpython scripts/paraview-shot.py VIEW ARRAY OUT.png

ParaView's own VTKHDF reader opens the view (its arrays are virtual
datasets over relayout's variable files); the array is shown as a surface
in a 2-D camera with the Inferno colour map and its scalar bar. The README's
picture is made by scripts/paraview-shot.sh with it.
"""
import sys

from paraview.simple import (ColorBy, CreateView, GetColorTransferFunction, Render,
                             SaveScreenshot, Show, VTKHDFReader)

view_file, array, png = sys.argv[1:4]
reader = VTKHDFReader(FileName=[view_file])
reader.UpdatePipeline()
view = CreateView("RenderView")
view.ViewSize = [800, 700]
view.OrientationAxesVisibility = 0
shown = Show(reader, view)
shown.SetRepresentationType("Surface")
ColorBy(shown, ("POINTS", array))
GetColorTransferFunction(array).ApplyPreset("Inferno (matplotlib)", True)
shown.SetScalarBarVisibility(view, True)
view.InteractionMode = "2D"
view.ResetCamera()
Render(view)
SaveScreenshot(png, view, ImageResolution=[800, 700])
print("wrote", png)
