#include "CSQLiteRowSets.h"

#include <sqlite3.h>
#include <stddef.h>

/// The pointer type SQLite checks between sqlite3_bind_pointer and sqlite3_value_pointer.
static const char *const row_set_type = "storefront_row_set";

static void collect_step(sqlite3_context *context, int count, sqlite3_value **values) {
    (void)count;
    // The set, looked up on the first row and kept in the aggregate's context (which lives for this one
    // execution): sqlite3_value_pointer compares type names on every call.
    srs_row_set **cached = sqlite3_aggregate_context(context, sizeof *cached);
    if (cached == NULL) {
        sqlite3_result_error_nomem(context);
        return;
    }
    if (*cached == NULL) *cached = sqlite3_value_pointer(values[0], row_set_type);
    srs_row_set *set = *cached;
    if (set == NULL) {
        sqlite3_result_error(context, "storefront_collect_rowids: the set is not bound", -1);
        return;
    }
    sqlite3_int64 rowid = sqlite3_value_int64(values[1]);
    if (rowid < 0 || rowid > set->maximum) return;
    uint64_t mask = (uint64_t)1 << (rowid % 64);
    uint64_t *word = &set->words[rowid / 64];
    if ((*word & mask) == 0) {
        *word |= mask;
        set->count += 1;
    }
}

static void collect_final(sqlite3_context *context) {
    // The set itself is the result; the count is read from it.
    sqlite3_result_null(context);
}

static void walk_keeps(sqlite3_context *context, int count, sqlite3_value **values) {
    (void)count;
    srs_row_set *set = sqlite3_value_pointer(values[0], row_set_type);
    if (set == NULL) {
        sqlite3_result_error(context, "storefront_walk_keeps: the set is not bound", -1);
        return;
    }
    set->steps += 1;
    if (set->gave_up || (set->budget >= 0 && set->steps > set->budget)) {
        set->gave_up = 1;
        sqlite3_result_int(context, 1);
        return;
    }
    sqlite3_int64 rowid = sqlite3_value_int64(values[1]);
    int member = rowid >= 0 && rowid <= set->maximum && (set->words[rowid / 64] >> (rowid % 64)) & 1;
    sqlite3_result_int(context, member);
}

int srs_register(sqlite3 *db) {
    int flags = SQLITE_UTF8 | SQLITE_DIRECTONLY;
    int code = sqlite3_create_function_v2(db, "storefront_collect_rowids", 2, flags, NULL, NULL, collect_step, collect_final, NULL);
    if (code != SQLITE_OK) return code;
    return sqlite3_create_function_v2(db, "storefront_walk_keeps", 2, flags, NULL, walk_keeps, NULL, NULL, NULL);
}

int srs_bind_row_set(sqlite3_stmt *statement, int index, srs_row_set *set) {
    return sqlite3_bind_pointer(statement, index, set, row_set_type, NULL);
}
