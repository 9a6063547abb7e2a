#ifndef CNATS_SHIM_H
#define CNATS_SHIM_H
// The official NATS C client (Debian's libnats-dev, 3.4.x): core NATS, JetStream and KV.
#include <nats/nats.h>
#endif
