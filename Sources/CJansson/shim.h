// Adapters for jansson's function-like macros, which Swift cannot import.
// Each adapter names the macro it stands for; none of them allocates or changes reference counts
// unless the jansson call it wraps does.
#ifndef STOREFRONT_CJANSSON_SHIM_H
#define STOREFRONT_CJANSSON_SHIM_H

#include <jansson.h>

/// json_typeof(json): the value's type tag.
static inline json_type cj_typeof(const json_t *json) { return json_typeof(json); }

/// json_is_true(json).
static inline int cj_is_true(const json_t *json) { return json_is_true(json); }

/// json_boolean(value): a new reference to the shared true or false value.
static inline json_t *cj_boolean(int value) { return json_boolean(value); }

/// JSON_INDENT(n): the dump flag for an indentation of n spaces.
static inline size_t cj_indent_flag(int n) { return JSON_INDENT(n); }

/// JSON_REAL_PRECISION(n): the dump flag for n significant digits in reals.
static inline size_t cj_real_precision_flag(int n) { return JSON_REAL_PRECISION(n); }

/// json_object_foreach's first step: an iterator at the object's first entry, or NULL.
static inline void *cj_object_iter(json_t *object) { return json_object_iter(object); }

/// json_decref(json), callable from Swift (the header's version is an inline function taking the
/// reference count from the pointer).
static inline void cj_decref(json_t *json) { json_decref(json); }

/// json_incref(json): a new reference to the same value.
static inline json_t *cj_incref(json_t *json) { return json_incref(json); }

/// An empty C string, for calls whose buffer pointer must not be NULL even when the length is 0.
static inline const char *cj_empty(void) { return ""; }

#endif
