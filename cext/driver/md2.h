/* MD2 (RFC 1319) and HMAC-MD2 (RFC 2104), and the integrity-check hash of the driver's
 * INTEGRITY_CHECK export table (docs: driver-dark-api.md §2-§5). No dependencies beyond libc, so
 * the tests can build this file alone. */
#ifndef CRICKET_MD2_H
#define CRICKET_MD2_H

#include <stddef.h>
#include <stdint.h>

/* The 66-byte state in the byte layout of driver-dark-api.md §5.2 (A, B, X are one 48-byte
 * array W during compression). The layout lets the tests compare whole states. */
struct cricket_md2 {
    uint8_t w[48];      /* A = w[0..15] chaining value, B = w[16..31] block, X = w[32..47] */
    uint8_t c[16];      /* running checksum */
    uint8_t n;          /* bytes already in the current block */
    uint8_t last;       /* last checksum byte written (L) */
};

void cricket_md2_init(struct cricket_md2 *s);
void cricket_md2_update(struct cricket_md2 *s, const void *data, size_t len);
void cricket_md2_final(struct cricket_md2 *s, uint8_t digest[16]);
void cricket_md2(const void *data, size_t len, uint8_t digest[16]);

/* HMAC over MD2 with a key of at most 16 bytes (one block; longer keys are not needed here). */
void cricket_hmac_md2(const uint8_t *key, size_t key_len, const void *msg, size_t len, uint8_t mac[16]);

/* One device's part of the integrity message (§4.2). */
struct cricket_integrity_device {
    uint8_t uuid[16];
    int32_t pci_domain, pci_bus, pci_device;
};

/* Everything the integrity hash covers (§4.1), gathered by the caller. */
struct cricket_integrity_inputs {
    uint32_t driver_version;
    uint32_t version;                 /* the slot's first argument, unchanged */
    uint32_t pid;
    uint32_t thread;                  /* pthread_self() truncated to 32 bits */
    uint64_t cudart_interface_table;
    uint64_t integrity_table;
    uint64_t integrity_slot1;
    uint64_t unix_seconds;
    const struct cricket_integrity_device *devices;
    size_t device_count;
};

/* Writes the 16 result bytes of the slot (§5.6): the fixed outputs for version%10 in {0,1},
 * otherwise HMAC-MD2 with the fixed key over R || D0 || ... ; `inner`, when not NULL, receives
 * the inner digest (for debugging and tests). */
void cricket_integrity_hash(const struct cricket_integrity_inputs *in, uint8_t result[16], uint8_t inner[16]);

#endif
