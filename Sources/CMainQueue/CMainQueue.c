#include "CMainQueue.h"

#include <stdint.h>
#include <unistd.h>

// libdispatch's private interface for run loops (dispatch_runloop_handle_t is an int on Linux).
extern int _dispatch_get_main_queue_handle_4CF(void);
extern void _dispatch_main_queue_callback_4CF(void *message);
// Its public interface, declared here as the headers are not on this module's path: the main queue is the
// object `dispatch_get_main_queue()` returns the address of.
extern struct dispatch_queue_s _dispatch_main_q;
extern void dispatch_async_f(struct dispatch_queue_s *queue, void *context, void (*work)(void *));

int cmq_main_queue_fd(void) { return _dispatch_get_main_queue_handle_4CF(); }

void cmq_drain_main_queue(void) {
    uint64_t count;
    // The eventfd is nonblocking: this read only resets its counter, if set.
    ssize_t ignored = read(_dispatch_get_main_queue_handle_4CF(), &count, sizeof count);
    (void)ignored;
    _dispatch_main_queue_callback_4CF(0);
}

void cmq_async_main(void *context, void (*work)(void *)) {
    dispatch_async_f(&_dispatch_main_q, context, work);
}
