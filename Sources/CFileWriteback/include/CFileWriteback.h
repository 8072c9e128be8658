// Starting a file's writeback without waiting for it: Linux's sync_file_range, which Swift's Glibc module does not
// import (it is declared only under _GNU_SOURCE).
#ifndef STOREFRONT_CFILEWRITEBACK_H
#define STOREFRONT_CFILEWRITEBACK_H

/// Starts writing the file's dirty pages to its device and returns without waiting for them
/// (sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WRITE)). It makes nothing durable: a later fdatasync still waits for
/// those writes and flushes the device's cache, but finds less left to do when there was work in between. Returns
/// 0, or an errno (ENOSYS where the system has no such call).
int fw_start_writeback(int descriptor);

#endif
