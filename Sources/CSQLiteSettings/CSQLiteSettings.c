#include "CSQLiteSettings.h"

#include <sqlite3.h>

int sqs_configure_process(void) {
    return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
}
