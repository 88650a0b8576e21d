/* FNV-1a (64 bit): the checksum of checkpoints and the input hash of the outputs' provenance. Not cryptographic: it
   tells files apart, it does not authenticate them. */
#ifndef MBS_HASH_H
#define MBS_HASH_H

#include <stddef.h>
#include <stdint.h>

#define MBS_FNV1A_INIT 14695981039346656037ULL

/* h updated with n bytes of data (start with MBS_FNV1A_INIT) */
static inline uint64_t MbsFNV1a(uint64_t h, const void *data, size_t n)
{
  const unsigned char *c = (const unsigned char *)data;
  for (size_t i = 0; i < n; i++) h = (h ^ c[i]) * 1099511628211ULL;
  return h;
}

#endif
