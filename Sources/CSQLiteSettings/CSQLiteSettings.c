#include "CSQLiteSettings.h"

#include <sqlite3.h>

int sqs_configure_process(void) {
    int result = sqlite3_config(SQLITE_CONFIG_MULTITHREAD);
    if (result != SQLITE_OK) return result;
    return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
}
