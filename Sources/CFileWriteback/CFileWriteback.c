#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "CFileWriteback.h"

#include <errno.h>
#include <fcntl.h>

int fw_start_writeback(int descriptor) {
#ifdef SYNC_FILE_RANGE_WRITE
    return sync_file_range(descriptor, 0, 0, SYNC_FILE_RANGE_WRITE) == 0 ? 0 : errno;
#else
    (void)descriptor;
    return ENOSYS;
#endif
}
