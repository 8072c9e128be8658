// SQL functions that fill and test a set of rowids held by the caller, so that a statement over many rows
// (a search's matches, a walk along an index) hands its rowids over inside SQLite instead of returning each
// row to the caller: one sqlite3_step per row costs more than the row itself when there are 100 000 of them.
#ifndef STOREFRONT_CSQLITEROWSETS_H
#define STOREFRONT_CSQLITEROWSETS_H

#include <stdint.h>

typedef struct sqlite3 sqlite3;
typedef struct sqlite3_stmt sqlite3_stmt;

/// A set of rowids 0...maximum as bits, owned by the caller, and the counters of a walk that tests it.
typedef struct srs_row_set {
    /// maximum / 64 + 1 words; bit (rowid % 64) of word (rowid / 64) is rowid.
    uint64_t *words;
    /// The largest rowid the set can hold; others are ignored (collect) or absent (contains).
    int64_t maximum;
    /// Members added by storefront_collect_rowids (each counted once).
    int64_t count;
    /// Rows storefront_walk_keeps has been asked about.
    int64_t steps;
    /// The most rows storefront_walk_keeps answers before giving up (negative: no limit).
    int64_t budget;
    /// Set when storefront_walk_keeps was asked about more than `budget` rows: from then on it answers 1, so
    /// that a statement with a LIMIT ends at once; the caller ignores its rows.
    int32_t gave_up;
} srs_row_set;

/// Registers on `db`, for direct use in statements only (not in triggers or views):
/// - `storefront_collect_rowids(set, rowid)`, an aggregate that adds each rowid to `set` (counting the new
///   ones in `count`) and returns NULL;
/// - `storefront_walk_keeps(set, rowid)`, whether `rowid` is in `set` (1 or 0), counting the question in
///   `steps` and giving up past `budget` (see `gave_up`).
/// `set` is bound with srs_bind_row_set. Returns SQLite's result code.
int srs_register(sqlite3 *db);

/// Binds `set` to parameter `index` (1-based) of `statement`, as the pointer the functions read. Returns
/// SQLite's result code.
int srs_bind_row_set(sqlite3_stmt *statement, int index, srs_row_set *set);

#endif
