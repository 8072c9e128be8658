// SQLite's process-wide settings, which are set with the variadic sqlite3_config() that Swift cannot call.
#ifndef STOREFRONT_CSQLITESETTINGS_H
#define STOREFRONT_CSQLITESETTINGS_H

/// Turns SQLite's memory statistics off (SQLITE_CONFIG_MEMSTATUS 0) for the whole process: otherwise every
/// allocation and free of SQLite's takes a process-wide mutex to count bytes (sqlite3_memory_used), which
/// nothing here reads. (The per-connection mutex is already off: GRDB opens every connection with
/// SQLITE_OPEN_NOMUTEX and serialises each one's use itself.)
///
/// SQLite accepts it only before it is initialised (before the first connection is opened); returns 0
/// (SQLITE_OK) when applied, else SQLite's code (SQLITE_MISUSE: too late in this process; the statistics then
/// stay on, which is correct, only slower).
int sqs_configure_process(void);

#endif
