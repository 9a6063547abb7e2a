#ifndef CCRYPT_SHIM_H
#define CCRYPT_SHIM_H
// libxcrypt (Debian's libcrypt-dev, which libc6-dev depends on): bcrypt password
// hashes for the NATS servers' users (Sources/EventBusJetStream/PasswordHash.swift).
#include <crypt.h>
#endif
