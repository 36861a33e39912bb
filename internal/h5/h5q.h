// h5q.h: C helpers for package h5, included by each cgo file. Everything is
// static inline so each file's copy is private and unused ones cost nothing.
#ifndef H5Q_H
#define H5Q_H
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "hdf5.h"
#include "hdf5_hl.h"

// Macros such as H5P_DEFAULT and H5T_NATIVE_DOUBLE (which calls H5open) are
// not reliably visible to cgo, so they are exposed as functions.
static inline hid_t h5q_default(void) { return H5P_DEFAULT; }
static inline hid_t h5q_all(void) { return H5S_ALL; }
static inline size_t h5q_variable(void) { return H5T_VARIABLE; }
static inline haddr_t h5q_undef(void) { return HADDR_UNDEF; }
static inline hsize_t h5q_unlimited(void) { return H5S_UNLIMITED; }
static inline hid_t h5q_native_i64(void) { return H5T_NATIVE_INT64; }
static inline hid_t h5q_native_u64(void) { return H5T_NATIVE_UINT64; }
static inline hid_t h5q_native_u32(void) { return H5T_NATIVE_UINT32; }
static inline hid_t h5q_native_double(void) { return H5T_NATIVE_DOUBLE; }
static inline hid_t h5q_c_s1(void) { return H5T_C_S1; }
static inline hid_t h5q_dcpl_class(void) { return H5P_DATASET_CREATE; }
static inline hid_t h5q_fapl_class(void) { return H5P_FILE_ACCESS; }
static inline hid_t h5q_lcpl_class(void) { return H5P_LINK_CREATE; }

// h5q_std_type returns a copy of the standard file type for a dtype (kind
// 1 int, 2 uint, 3 float; 4 char: a one-byte string, NUL-terminated
// padding, ASCII, as netCDF-4 stores NC_CHAR), or -1.
static inline hid_t h5q_std_type(int kind, int size, int be) {
	hid_t t = -1;
	if (kind == 4) {
		if (size != 1) return -1;
		t = H5Tcopy(H5T_C_S1);
		if (t < 0) return -1;
		if (H5Tset_strpad(t, H5T_STR_NULLTERM) < 0 || H5Tset_cset(t, H5T_CSET_ASCII) < 0) {
			H5Tclose(t);
			return -1;
		}
		return t;
	}
	switch (kind) {
	case 1:
		switch (size) {
		case 1: t = be ? H5T_STD_I8BE : H5T_STD_I8LE; break;
		case 2: t = be ? H5T_STD_I16BE : H5T_STD_I16LE; break;
		case 4: t = be ? H5T_STD_I32BE : H5T_STD_I32LE; break;
		case 8: t = be ? H5T_STD_I64BE : H5T_STD_I64LE; break;
		}
		break;
	case 2:
		switch (size) {
		case 1: t = be ? H5T_STD_U8BE : H5T_STD_U8LE; break;
		case 2: t = be ? H5T_STD_U16BE : H5T_STD_U16LE; break;
		case 4: t = be ? H5T_STD_U32BE : H5T_STD_U32LE; break;
		case 8: t = be ? H5T_STD_U64BE : H5T_STD_U64LE; break;
		}
		break;
	case 3:
		switch (size) {
		case 4: t = be ? H5T_IEEE_F32BE : H5T_IEEE_F32LE; break;
		case 8: t = be ? H5T_IEEE_F64BE : H5T_IEEE_F64LE; break;
		}
		break;
	}
	if (t < 0) return -1;
	return H5Tcopy(t);
}

static inline herr_t h5q_quiet(void) { return H5Eset_auto2(H5E_DEFAULT, NULL, NULL); }

typedef struct { char msg[512]; int n; } h5q_errbuf;

static inline herr_t h5q_err_cb(unsigned n, const H5E_error2_t *e, void *data) {
	h5q_errbuf *b = (h5q_errbuf *)data;
	// Walking upward, the first entry is where the error was detected,
	// which carries the specific message ("truncated file: eof = ...").
	if (b->n == 0 && e->desc != NULL) {
		snprintf(b->msg, sizeof b->msg, "%s", e->desc);
	}
	b->n++;
	return 0;
}

// h5q_last_error copies the innermost message of this thread's error stack.
static inline void h5q_last_error(char *out, size_t len) {
	h5q_errbuf b;
	b.msg[0] = 0;
	b.n = 0;
	H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, h5q_err_cb, &b);
	snprintf(out, len, "%s", b.msg);
	H5Eclear2(H5E_DEFAULT);
}


typedef struct { char *name; int kind; haddr_t addr; } h5q_child; // kind 1 group, 2 dataset
typedef struct { h5q_child *v; size_t n, cap; } h5q_list;

static inline herr_t h5q_iter_cb(hid_t g, const char *name, const H5L_info_t *info, void *data) {
	h5q_list *l = (h5q_list *)data;
	if (info->type != H5L_TYPE_HARD) return 0; // soft and external links are skipped
	H5O_info_t oi;
	if (H5Oget_info_by_name2(g, name, &oi, H5O_INFO_BASIC, H5P_DEFAULT) < 0) return -1;
	int kind = oi.type == H5O_TYPE_GROUP ? 1 : oi.type == H5O_TYPE_DATASET ? 2 : 0;
	if (kind == 0) return 0; // named datatypes
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 16;
		h5q_child *v = realloc(l->v, cap * sizeof *v);
		if (v == NULL) return -1;
		l->v = v;
		l->cap = cap;
	}
	l->v[l->n].name = strdup(name);
	if (l->v[l->n].name == NULL) return -1;
	l->v[l->n].kind = kind;
	l->v[l->n].addr = oi.addr;
	l->n++;
	return 0;
}

static inline herr_t h5q_children(hid_t file, const char *path, h5q_list *out) {
	hid_t g = H5Gopen2(file, path, H5P_DEFAULT);
	if (g < 0) return -1;
	hsize_t idx = 0;
	herr_t r = H5Literate(g, H5_INDEX_NAME, H5_ITER_INC, &idx, h5q_iter_cb, out);
	H5Gclose(g);
	return r;
}

static inline void h5q_free_list(h5q_list *l) {
	for (size_t i = 0; i < l->n; i++) free(l->v[i].name);
	free(l->v);
	l->v = NULL;
	l->n = l->cap = 0;
}

static inline h5q_child *h5q_at(h5q_list *l, size_t i) { return &l->v[i]; }

// h5q_exists returns 1 when every link along path resolves to an object, 0
// when some link is missing, -1 on error. H5Lexists alone fails (rather than
// returning 0) when an intermediate group is missing.
static inline int h5q_exists(hid_t file, const char *path) {
	size_t n = strlen(path);
	if (n == 0) return 0;
	if (strcmp(path, "/") == 0) return 1;
	char *buf = strdup(path);
	if (buf == NULL) return -1;
	int res = 1;
	for (size_t i = 1; i <= n; i++) {
		if (buf[i] != '/' && buf[i] != 0) continue;
		char c = buf[i];
		buf[i] = 0;
		htri_t e = H5Lexists(file, buf, H5P_DEFAULT);
		if (e > 0) e = H5Oexists_by_name(file, buf, H5P_DEFAULT);
		buf[i] = c;
		if (e <= 0) { res = e < 0 ? -1 : 0; break; }
	}
	free(buf);
	return res;
}

static inline herr_t h5q_vlen_reclaim(hid_t type, hid_t space, void *buf) {
	return H5Dvlen_reclaim(type, space, H5P_DEFAULT, buf);
}


// h5q_scale_path_cb keeps the path of the first scale attached to a
// dimension (H5DSiterate_scales visits them in attachment order).
static inline herr_t h5q_scale_path_cb(hid_t did, unsigned dim, hid_t dsid, void *data) {
	char *buf = (char *)data;
	if (H5Iget_name(dsid, buf, 1024) < 0) buf[0] = 0;
	return 1; // stop at the first
}

// h5q_dim_scale writes into buf (1024 bytes) the path of the first
// dimension scale attached to dimension dim of did: 1 when one is, 0 when
// none, -1 on error.
static inline int h5q_dim_scale(hid_t did, unsigned dim, char *buf) {
	buf[0] = 0;
	int n = H5DSget_num_scales(did, dim);
	if (n <= 0) return n;
	if (H5DSiterate_scales(did, dim, NULL, h5q_scale_path_cb, buf) < 0) return -1;
	return buf[0] != 0;
}

#endif
