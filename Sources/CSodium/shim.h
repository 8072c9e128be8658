// Adapters for the libsodium macros the Credentials module uses. Several of them are defined as other
// macros (crypto_pwhash_ALG_ARGON2ID13 -> crypto_pwhash_argon2id_ALG_ARGON2ID13 -> 2), which Swift does
// not always import; a function per macro keeps the Swift side independent of how each one is spelt.
// Each adapter names the macro it stands for. None of them allocates.
#ifndef STOREFRONT_CSODIUM_SHIM_H
#define STOREFRONT_CSODIUM_SHIM_H

#include <sodium.h>

/// crypto_pwhash_ALG_ARGON2ID13: the algorithm id of Argon2id version 1.3.
static inline int cs_pwhash_alg_argon2id13(void) { return crypto_pwhash_ALG_ARGON2ID13; }

/// crypto_pwhash_STRBYTES: the size of an encoded hash buffer, terminating NUL included.
static inline size_t cs_pwhash_strbytes(void) { return crypto_pwhash_STRBYTES; }

/// crypto_pwhash_argon2id_OPSLIMIT_INTERACTIVE: Argon2id's passes (t) for interactive logins.
static inline unsigned long long cs_pwhash_argon2id_opslimit_interactive(void) {
    return crypto_pwhash_argon2id_OPSLIMIT_INTERACTIVE;
}

/// crypto_pwhash_argon2id_MEMLIMIT_INTERACTIVE: Argon2id's memory in bytes for interactive logins.
static inline size_t cs_pwhash_argon2id_memlimit_interactive(void) {
    return crypto_pwhash_argon2id_MEMLIMIT_INTERACTIVE;
}

/// crypto_pwhash_argon2id_OPSLIMIT_MIN: the fewest passes libsodium accepts for Argon2id.
static inline unsigned long long cs_pwhash_argon2id_opslimit_min(void) { return crypto_pwhash_argon2id_OPSLIMIT_MIN; }

/// crypto_pwhash_argon2id_MEMLIMIT_MIN: the least memory in bytes libsodium accepts for Argon2id.
static inline size_t cs_pwhash_argon2id_memlimit_min(void) { return crypto_pwhash_argon2id_MEMLIMIT_MIN; }

/// crypto_hash_sha256_BYTES: the size of a SHA-256 digest.
static inline size_t cs_hash_sha256_bytes(void) { return crypto_hash_sha256_BYTES; }

/// sodium_base64_VARIANT_URLSAFE_NO_PADDING: base64url (RFC 4648 section 5) without '=' padding.
static inline int cs_base64_variant_urlsafe_no_padding(void) { return sodium_base64_VARIANT_URLSAFE_NO_PADDING; }

/// sodium_base64_ENCODED_LEN(bin_len, VARIANT_URLSAFE_NO_PADDING): the buffer size sodium_bin2base64
/// needs for bin_len bytes, terminating NUL included.
static inline size_t cs_base64_urlsafe_no_padding_encoded_len(size_t bin_len) {
    return sodium_base64_ENCODED_LEN(bin_len, sodium_base64_VARIANT_URLSAFE_NO_PADDING);
}

#endif
