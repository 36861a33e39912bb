//go:build cgo

package h5

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"testing"

	"relayout/internal/testkit"
)

// dataDir returns the shared real-data folder, skipping the test when it is
// absent (failing instead when CI=true).
func dataDir(t *testing.T) string {
	return testkit.SharedData(t, "")
}

const python = "/usr/bin/python3"

// runPython runs script with args under the system python (which has h5py)
// and returns its stdout.
func runPython(t *testing.T, script string, args ...string) []byte {
	t.Helper()
	if _, err := os.Stat(python); err != nil {
		testkit.Unavailable(t, "%s not found (Debian python3): %v", python, err)
	}
	cmd := exec.Command(python, append([]string{"-c", script}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("python oracle failed: %v\n%s", err, stderr.String())
	}
	return out
}

// oracleScript describes every object of an HDF5 file with h5py, as JSON.
const oracleScript = `
import sys, json, hashlib, h5py, numpy as np
f = h5py.File(sys.argv[1], 'r')
ub = f.userblock_size

def attrs(o):
    out = {}
    for k in o.attrs:
        aid = o.attrs.get_id(k)
        if aid.shape is None:
            continue
        dt = aid.dtype
        try:
            v = o.attrs[k]
        except Exception:
            continue
        arr = np.asarray(v).reshape(-1)
        # the stored width (floats wider than 8 bytes are read as float64)
        if dt.kind == 'i':
            typ, vals = 'int%d' % (8 * dt.itemsize), [str(int(x)) for x in arr]
        elif dt.kind == 'u':
            typ, vals = 'uint%d' % (8 * dt.itemsize), [str(int(x)) for x in arr]
        elif dt.kind == 'f':
            typ, vals = 'float32' if dt.itemsize == 4 else 'float64', [repr(float(x)) for x in arr]
        elif dt.kind == 'S':
            typ, vals = 'string', [x.decode('utf-8') for x in arr]
        elif h5py.check_string_dtype(dt) is not None:
            typ, vals = 'string', [x.decode('utf-8') if isinstance(x, bytes) else x for x in arr]
        else:
            continue
        out[k] = dict(type=typ, scalar=aid.shape == (), values=vals)
    return out

LAYOUT = {h5py.h5d.COMPACT: 'compact', h5py.h5d.CONTIGUOUS: 'contiguous',
          h5py.h5d.CHUNKED: 'chunked', h5py.h5d.VIRTUAL: 'virtual'}
objs = []
def visit(name, o):
    d = dict(path='/' + name, dataset=isinstance(o, h5py.Dataset), attrs=attrs(o))
    if d['dataset']:
        dcpl = o.id.get_create_plist()
        d['shape'] = list(o.shape) if o.shape is not None else []
        d['dtype'] = o.dtype.str
        d['layout'] = LAYOUT[dcpl.get_layout()]
        d['chunk'] = list(o.chunks) if o.chunks else []
        d['filters'] = []
        for i in range(dcpl.get_nfilters()):
            code, flags, vals, fname = dcpl.get_filter(i)
            d['filters'].append(dict(id=code, params=list(vals)))
        # get_offset is absolute (includes the user block) in HDF5 1.10.8.
        off = o.id.get_offset()
        unalloc = o.id.get_space_status() == h5py.h5d.SPACE_STATUS_NOT_ALLOCATED
        d['offset'] = -1 if off is None or unalloc else off
        d['storage'] = o.id.get_storage_size()
        d['objaddr'] = h5py.h5o.get_info(o.id).addr
        d['fill'] = ''
        fdef = dcpl.fill_value_defined()
        numeric = o.dtype.kind in 'iu' or (o.dtype.kind == 'f' and o.dtype.itemsize in (4, 8))
        if numeric and fdef in (h5py.h5d.FILL_VALUE_USER_DEFINED, h5py.h5d.FILL_VALUE_DEFAULT):
            # user-defined: its bytes (zeros too); default: zeros
            a = np.zeros(1, dtype=o.dtype)
            if fdef == h5py.h5d.FILL_VALUE_USER_DEFINED:
                dcpl.get_fill_value(a)
            d['fill'] = a.tobytes().hex()
        d['chunks'] = []
        if d['layout'] == 'chunked':
            for i in range(o.id.get_num_chunks()):
                ci = o.id.get_chunk_info(i)
                c = dict(offset=list(ci.chunk_offset), mask=ci.filter_mask, addr=ub + ci.byte_offset, size=ci.size)
                if i < 4:
                    c['sha'] = hashlib.sha256(o.id.read_direct_chunk(ci.chunk_offset)[1]).hexdigest()
                d['chunks'].append(c)
        d['raw'] = ''
        if o.dtype.kind in 'iufS' and o.size * o.dtype.itemsize <= 1 << 20:
            d['raw'] = np.ascontiguousarray(o[()]).tobytes().hex()
    objs.append(d)

f.visititems(visit)
print(json.dumps(dict(root_attrs=attrs(f), objs=objs)))
`

type oracleAttr struct {
	Type   string   `json:"type"`
	Scalar bool     `json:"scalar"`
	Values []string `json:"values"`
}

type oracleChunk struct {
	Offset []int64 `json:"offset"`
	Mask   uint32  `json:"mask"`
	Addr   int64   `json:"addr"`
	Size   int64   `json:"size"`
	SHA    string  `json:"sha"`
}

type oracleObj struct {
	Path    string                `json:"path"`
	Dataset bool                  `json:"dataset"`
	Attrs   map[string]oracleAttr `json:"attrs"`
	Shape   []int64               `json:"shape"`
	DType   string                `json:"dtype"`
	Layout  string                `json:"layout"`
	Chunk   []int64               `json:"chunk"`
	Filters []struct {
		ID     int      `json:"id"`
		Params []uint32 `json:"params"`
	} `json:"filters"`
	Offset  int64         `json:"offset"`
	Storage int64         `json:"storage"`
	ObjAddr uint64        `json:"objaddr"`
	Fill    string        `json:"fill"`
	Chunks  []oracleChunk `json:"chunks"`
	Raw     string        `json:"raw"`
}

type oracleFile struct {
	RootAttrs map[string]oracleAttr `json:"root_attrs"`
	Objs      []oracleObj           `json:"objs"`
}

func oracle(t *testing.T, path string) oracleFile {
	t.Helper()
	var o oracleFile
	if err := json.Unmarshal(runPython(t, oracleScript, path), &o); err != nil {
		t.Fatalf("oracle JSON: %v", err)
	}
	return o
}
