// The main dispatch queue as a file descriptor, so that a poll() loop on the main thread can serve both
// stdin and the main actor (whose jobs run on the main dispatch queue). These are the entry points that
// CoreFoundation's run loop uses for the same purpose; libdispatch exports them on Linux.
#ifndef STOREFRONT_CMAINQUEUE_H
#define STOREFRONT_CMAINQUEUE_H

/// A descriptor (an eventfd on Linux) that becomes readable when the main queue has work.
/// Call on the main thread.
int cmq_main_queue_fd(void);

/// Clears the descriptor's readiness and runs the jobs queued on the main queue. Call on the main thread.
void cmq_drain_main_queue(void);

/// Queues `work(context)` on the main queue (`dispatch_async_f`: no block is made for it). Any thread.
void cmq_async_main(void *context, void (*work)(void *));

#endif
