// SQLite's process-wide settings, which are set with the variadic sqlite3_config() that Swift cannot call.
#ifndef STOREFRONT_CSQLITESETTINGS_H
#define STOREFRONT_CSQLITESETTINGS_H

/// Sets, for every SQLite connection this process opens afterwards:
///
/// - the multi-thread mode (SQLITE_CONFIG_MULTITHREAD): a connection takes no mutex of its own on each call.
///   Every connection is used from one thread at a time anyway: GRDB serialises each one's access (it
///   documents multi-thread mode as the mode it supports), and nothing else opens SQLite connections.
/// - no memory statistics (SQLITE_CONFIG_MEMSTATUS 0): otherwise every allocation and free of SQLite's
///   takes a process-wide mutex to count bytes (sqlite3_memory_used), which nothing here reads.
///
/// SQLite accepts these only before it is initialised (before the first connection is opened); returns 0
/// (SQLITE_OK) when both were applied, else the first error code (SQLITE_MISUSE: too late in this process;
/// the defaults stay, which are correct, only slower).
int sqs_configure_process(void);

#endif
