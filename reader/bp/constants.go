package bp

// openPMD constant record components on BP. openPMD-api's ADIOS2 backend
// writes a record component whose every element is one value as two
// attributes and no variable:
//
//	attribute /data/<it>/<meshes>/<rec>/<comp>/value   one element of the record's type
//	attribute /data/<it>/<meshes>/<rec>/<comp>/shape   uint64 per dimension
//	(a scalar record: /data/<it>/<meshes>/<rec>/value and /shape)
//
// The component's other attributes (unitSI, position) sit beside them, its
// record's above, as for a component with data. Each becomes a constant
// array (catalog.Array.Constant) at the place the variable would have
// mapped to; in a variable-based series, once per step that has them.
// Particle record components (charge, mass, positionOffset/x) likewise.

import (
	"fmt"
	"slices"
	"strings"

	"relayout/catalog"
)

// constants adds an entry for every constant mesh record component.
// varNames are the dataset's variable names: a path that is also a variable
// is not a constant.
func (d *Dataset) constants(varNames map[string]bool, cfg Config) error {
	steps := []int{0}
	if d.pmd.varBased {
		steps = steps[:0]
		for s := range d.steps() {
			steps = append(steps, s)
		}
	}
	for _, s := range steps {
		all := d.attrs.list
		if d.pmd.varBased {
			all = d.attrs.at(s)
		}
		byName := map[string]*catalog.Attr{}
		for i := range all {
			byName[all[i].Name] = &all[i]
		}
		for _, a := range all {
			comp, ok := strings.CutSuffix(a.Name, "/value")
			shape := byName[comp+"/shape"]
			if !ok || shape == nil || varNames[comp] {
				continue
			}
			pl := d.pmd.locate(comp, s)
			if (pl.kind != pmdMesh && pl.kind != pmdParticles) || !cfg.Selects(pl.Var) {
				continue
			}
			value := a
			value.Name = "value"
			sh := *shape
			sh.Name = "shape"
			arr, err := catalog.ConstantArray([]catalog.Attr{value, sh})
			if err != nil {
				return fmt.Errorf("%s: constant record component %s: %w", d.pfx, comp, catalog.CorruptIn(err, d.info.Path))
			}
			d.entries = append(d.entries, entry{Var: pl.Var, Step: pl.Step, name: comp, step: s,
				record: pl.Record, iterKey: pl.Iter, species: pl.Species, speciesGroup: pl.SpeciesGroup, constant: arr})
		}
	}
	return nil
}

// constantArray is the array of constant entry e with its attributes
// (value and shape are the array itself).
func (d *Dataset) constantArray(e *entry) *catalog.Array {
	a := *e.constant
	a.Var, a.Step = e.Var, e.Step
	a.Source = fmt.Sprintf("%s:%s (constant)", d.meta, e.name)
	d.decorate(e, &a)
	a.Attrs = slices.DeleteFunc(a.Attrs, func(at catalog.Attr) bool { return at.Name == "value" || at.Name == "shape" })
	return &a
}
