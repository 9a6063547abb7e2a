#ifndef EVENTBUS_CPREFETCH_H
#define EVENTBUS_CPREFETCH_H

/// Asks the CPU to bring the cache line at `address` in, for a read soon, without waiting for it.
/// A hint: it never faults, whatever the address.
static inline void eventbus_prefetch(const void *address) {
    __builtin_prefetch(address, 0, 3);
}

#endif
