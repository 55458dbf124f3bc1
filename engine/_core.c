/* engine._core: the UNO rules of engine.game in C (docs/engine.md, "Compiled core").
 *
 * The same state machine as engine/game.py, decision for decision, drawing
 * exactly the same cards: the dealer, deal and per-seat draw streams are
 * Python's random.Random streams (string seeds, MT19937, sample), reimplemented
 * here number for number (docs/engine.md, "Determinism and seeds"). Cards
 * are ints (physical ids 0..107, kinds 0..53, as engine.cards); hands are ordered arrays of ids with per-kind and
 * per-colour counts; events and action records are kept as compact int
 * records and turned into the replay's dicts only when ``events`` or
 * ``actions`` is read. engine/game.py stays the reference: the differential
 * tests (tests/engine/test_compiled.py) compare every event, observation and
 * legal-action list. Python-level wrapper, selection and fallback:
 * engine/compiled.py.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>
#include <stdint.h>
#include <string.h>

/* private CPython calls with a public name from 3.13 on */
#if PY_VERSION_HEX >= 0x030D0000
#define LOOKUP_ATTR PyObject_GetOptionalAttr
#define NEW_DICT(n) PyDict_New()
#else
#define LOOKUP_ATTR _PyObject_LookupAttr
#define NEW_DICT(n) _PyDict_NewPresized(n)
#endif

/* sha256 of this file, given by the build (setup.py, deploy/Dockerfile): engine.compiled
 * refuses a core built from another version of it (a stale build) */
#ifndef CORE_SOURCE_SHA256
#define CORE_SOURCE_SHA256 ""
#endif

#define DECK_SIZE 108
#define NUM_KINDS 54
#define MAX_SEATS 10
#define WILD_KIND 52
#define WD4_KIND 53
#define SKIP 10
#define REVERSE 11
#define DRAW_TWO 12
#define WILD 13
#define WILD_DRAW_FOUR 14
#define STRIKE_DRAW 2
#define MAX_STALLED_ROUNDS 100
#define NUM_ACTIONS 78

/* action ids: engine.game.ACTIONS */
#define A_DRAW 0
#define A_PASS 1
#define A_ACCEPT 2
#define A_CHALLENGE 3
#define A_PLAY0 4
#define A_SWAP0 64
#define A_COLOR0 74

/* decisions: engine.game.DECISIONS */
enum { D_NONE = -1, D_PLAY, D_PLAY_DRAWN, D_CHOOSE_COLOR, D_CHALLENGE, D_STACK, D_JUMP_IN, D_SWAP_TARGET, N_DECISIONS };
static const char *DECISION_NAMES[N_DECISIONS] = {"play", "play_drawn", "choose_color", "challenge", "stack", "jump_in", "swap_target"};

/* compact events */
enum {
    E_TURN, E_PLAY, E_UNO_CAUGHT, E_DRAW, E_RESHUFFLE, E_SKIP, E_DIRECTION, E_PENDING, E_CHALLENGE,
    E_PASS, E_SWAP, E_PASS_HANDS, E_COLOR, E_OBJ
};
enum { R_DRAW, R_PENALTY, R_UNO, R_STRIKE, R_CHALLENGE, N_REASONS };
static const char *REASON_NAMES[N_REASONS] = {"draw", "penalty", "uno", "strike", "challenge"};

static const char *CODE_TEXT[NUM_KINDS] = {
    "R0","R1","R2","R3","R4","R5","R6","R7","R8","R9","RS","RR","R+2",
    "Y0","Y1","Y2","Y3","Y4","Y5","Y6","Y7","Y8","Y9","YS","YR","Y+2",
    "G0","G1","G2","G3","G4","G5","G6","G7","G8","G9","GS","GR","G+2",
    "B0","B1","B2","B3","B4","B5","B6","B7","B8","B9","BS","BR","B+2",
    "W","W+4"};
static const char *COLOR_TEXT[4] = {"R", "Y", "G", "B"};

static int8_t KIND_COLOR[NUM_KINDS];
static int8_t KIND_RANK[NUM_KINDS];
/* compute_legal's plays of a coloured card: per colour in play (g->color + 1: -1 for none yet) and top
 * card's rank, the kinds below WILD_KIND of that colour or that rank, in order (13 of the colour and 3
 * of the rank at most): its loop reads these and their counts, not all 52 kinds' (module init) */
#define NUM_RANKS (WILD_DRAW_FOUR + 1)
#define MAX_MATCH 16
static uint8_t MATCH_N[5][NUM_RANKS];
static uint8_t MATCH_KINDS[5][NUM_RANKS][MAX_MATCH];
static int8_t KIND_POINTS[NUM_KINDS];
static uint8_t DECK[DECK_SIZE];
static uint8_t IDENTITY[DECK_SIZE];  /* 0, 1, ..., DECK_SIZE - 1: a seat's draw order at a round's start */

/* Python objects built once */
static PyObject *CODE[NUM_KINDS], *COLOR_STR[4], *DECISION_STR[N_DECISIONS], *REASON_STR[N_REASONS];
static PyObject *KIND_BY_CODE;   /* code -> kind (int) */
static PyObject *TEMPLATE[2][NUM_ACTIONS];  /* action dicts, without and with "uno" */
static PyObject *VIEW[2][NUM_ACTIONS];  /* their read-only views (types.MappingProxyType), as snapshots list them */
static PyObject *SMALL_INT[256];
static PyObject *S_e, *S_seat, *S_card, *S_color, *S_jump_in, *S_uno, *S_cards, *S_reason, *S_direction,
    *S_target, *S_honest, *S_type, *S_play, *S_swap, *S_turn, *S_uno_caught, *S_draw, *S_reshuffle, *S_skip,
    *S_pending, *S_challenge, *S_pass, *S_pass_hands, *S_since, *S_decision, *S_action, *S_fault, *S_kind,
    *S_strikes, *S_forfeit, *S_players, *S_hand, *S_top_card, *S_current, *S_hand_sizes, *S_scores,
    *S_draw_pile, *S_discard, *S_pending_draw, *S_round, *S_dealer, *S_legal_actions, *S_random,
    *S_randrange, *S_sample, *S_round_start, *S_hands, *S_returned, *S_top, *S_round_end, *S_winner,
    *S_points, *S_game_end, *S_ranks, *S_out, *S_max_turns, *S_accept, *S_decide, *S_agent,
    *S_last_decision_seconds, *S___call__;
static PyObject *HOOK_ILLEGAL; /* engine.compiled._illegal(game, what, value): raises IllegalAction */
static PyObject *RULES_TYPE;   /* engine.rules.Rules (engine.compiled sets it): what a game is given */


/* wild colour choices are part of the play id */
static inline int play_id(int k, int c) {
    if (k < WILD_KIND) return A_PLAY0 + k;
    return (k == WILD_KIND ? 56 : 60) + c;
}
static inline int id_is_play(int id) { return id >= A_PLAY0 && id < A_SWAP0; }
static inline int id_kind(int id) { return id < 56 ? id - A_PLAY0 : (id < 60 ? WILD_KIND : WD4_KIND); }
static inline int id_color(int id) { return id < 56 ? KIND_COLOR[id - A_PLAY0] : (id - A_PLAY0) & 3; }
static inline int mod(int a, int n) { int r = a % n; return r < 0 ? r + n : r; }

static inline PyObject *small_int(long v) {
    if (v >= 0 && v < 256) { Py_INCREF(SMALL_INT[v]); return SMALL_INT[v]; }
    return PyLong_FromLong(v);
}

/* ------------------------------------------------------------------ random streams
 * Python's random.Random, as the pure engine uses it, reimplemented so that a stream
 * gives exactly the same numbers without a Python call: seeding from a str (version 2:
 * the int of the UTF-8 bytes followed by their SHA-512, big-endian, fed to
 * init_by_array as 32-bit words, least significant first), MT19937, random()
 * (53 bits), _randbelow (getrandbits of n.bit_length() bits, rejected until < n) and
 * sample(range(n), k). Checked against random.Random in tests/engine/test_compiled.py.
 */
/* SHA-512 (FIPS 180-4): the fractional parts of the cube roots of the first 80 primes, of the square roots of the first 8 */
static const uint64_t SHA_K[80] = {
    0x428a2f98d728ae22ULL, 0x7137449123ef65cdULL, 0xb5c0fbcfec4d3b2fULL, 0xe9b5dba58189dbbcULL,
    0x3956c25bf348b538ULL, 0x59f111f1b605d019ULL, 0x923f82a4af194f9bULL, 0xab1c5ed5da6d8118ULL,
    0xd807aa98a3030242ULL, 0x12835b0145706fbeULL, 0x243185be4ee4b28cULL, 0x550c7dc3d5ffb4e2ULL,
    0x72be5d74f27b896fULL, 0x80deb1fe3b1696b1ULL, 0x9bdc06a725c71235ULL, 0xc19bf174cf692694ULL,
    0xe49b69c19ef14ad2ULL, 0xefbe4786384f25e3ULL, 0x0fc19dc68b8cd5b5ULL, 0x240ca1cc77ac9c65ULL,
    0x2de92c6f592b0275ULL, 0x4a7484aa6ea6e483ULL, 0x5cb0a9dcbd41fbd4ULL, 0x76f988da831153b5ULL,
    0x983e5152ee66dfabULL, 0xa831c66d2db43210ULL, 0xb00327c898fb213fULL, 0xbf597fc7beef0ee4ULL,
    0xc6e00bf33da88fc2ULL, 0xd5a79147930aa725ULL, 0x06ca6351e003826fULL, 0x142929670a0e6e70ULL,
    0x27b70a8546d22ffcULL, 0x2e1b21385c26c926ULL, 0x4d2c6dfc5ac42aedULL, 0x53380d139d95b3dfULL,
    0x650a73548baf63deULL, 0x766a0abb3c77b2a8ULL, 0x81c2c92e47edaee6ULL, 0x92722c851482353bULL,
    0xa2bfe8a14cf10364ULL, 0xa81a664bbc423001ULL, 0xc24b8b70d0f89791ULL, 0xc76c51a30654be30ULL,
    0xd192e819d6ef5218ULL, 0xd69906245565a910ULL, 0xf40e35855771202aULL, 0x106aa07032bbd1b8ULL,
    0x19a4c116b8d2d0c8ULL, 0x1e376c085141ab53ULL, 0x2748774cdf8eeb99ULL, 0x34b0bcb5e19b48a8ULL,
    0x391c0cb3c5c95a63ULL, 0x4ed8aa4ae3418acbULL, 0x5b9cca4f7763e373ULL, 0x682e6ff3d6b2b8a3ULL,
    0x748f82ee5defb2fcULL, 0x78a5636f43172f60ULL, 0x84c87814a1f0ab72ULL, 0x8cc702081a6439ecULL,
    0x90befffa23631e28ULL, 0xa4506cebde82bde9ULL, 0xbef9a3f7b2c67915ULL, 0xc67178f2e372532bULL,
    0xca273eceea26619cULL, 0xd186b8c721c0c207ULL, 0xeada7dd6cde0eb1eULL, 0xf57d4f7fee6ed178ULL,
    0x06f067aa72176fbaULL, 0x0a637dc5a2c898a6ULL, 0x113f9804bef90daeULL, 0x1b710b35131c471bULL,
    0x28db77f523047d84ULL, 0x32caab7b40c72493ULL, 0x3c9ebe0a15c9bebcULL, 0x431d67c49c100d4cULL,
    0x4cc5d4becb3e42b6ULL, 0x597f299cfc657e2aULL, 0x5fcb6fab3ad6faecULL, 0x6c44198c4a475817ULL,
};
static const uint64_t SHA_H[8] = {
    0x6a09e667f3bcc908ULL, 0xbb67ae8584caa73bULL, 0x3c6ef372fe94f82bULL, 0xa54ff53a5f1d36f1ULL,
    0x510e527fade682d1ULL, 0x9b05688c2b3e6c1fULL, 0x1f83d9abfb41bd6bULL, 0x5be0cd19137e2179ULL,
};

#define ROTR64(x, n) (((x) >> (n)) | ((x) << (64 - (n))))

/* big-endian loads and stores (a byte loop where the compiler has no byte-swap built-in) */
#if defined(__GNUC__) || defined(__clang__)
static inline uint64_t load_be64(const uint8_t *p) { uint64_t v; memcpy(&v, p, 8); return __builtin_bswap64(v); }
static inline void store_be64(uint8_t *p, uint64_t v) { v = __builtin_bswap64(v); memcpy(p, &v, 8); }
static inline uint32_t load_be32(const uint8_t *p) { uint32_t v; memcpy(&v, p, 4); return __builtin_bswap32(v); }
#else
static inline uint64_t load_be64(const uint8_t *p) {
    uint64_t v = 0;
    for (int b = 0; b < 8; b++) v = (v << 8) | p[b];
    return v;
}
static inline void store_be64(uint8_t *p, uint64_t v) { for (int b = 0; b < 8; b++) p[b] = (uint8_t)(v >> (56 - 8 * b)); }
static inline uint32_t load_be32(const uint8_t *p) {
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}
#endif

/* one round; the eight working variables rotate by renaming (SHA_ROUND8), not by moves.
 * Ch(e, f, g) = g ^ (e & (f ^ g)); Maj(a, b, c) = b ^ ((a ^ b) & (b ^ c)) */
#define SHA_ROUND(a, b, c, d, e, f, g, h, t) do { \
        uint64_t t1 = h + (ROTR64(e, 14) ^ ROTR64(e, 18) ^ ROTR64(e, 41)) + (g ^ (e & (f ^ g))) + SHA_K[t] + w[t]; \
        uint64_t t2 = (ROTR64(a, 28) ^ ROTR64(a, 34) ^ ROTR64(a, 39)) + (b ^ ((a ^ b) & (b ^ c))); \
        d += t1; h = t1 + t2; \
    } while (0)

static void sha512_block(uint64_t *h, const uint8_t *p) {
    uint64_t w[80];
    for (int t = 0; t < 16; t++) w[t] = load_be64(p + t * 8);
    for (int t = 16; t < 80; t++) {
        uint64_t s0 = ROTR64(w[t - 15], 1) ^ ROTR64(w[t - 15], 8) ^ (w[t - 15] >> 7);
        uint64_t s1 = ROTR64(w[t - 2], 19) ^ ROTR64(w[t - 2], 61) ^ (w[t - 2] >> 6);
        w[t] = s1 + w[t - 7] + s0 + w[t - 16];
    }
    uint64_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], hh = h[7];
    for (int t = 0; t < 80; t += 8) {
        SHA_ROUND(a, b, c, d, e, f, g, hh, t);
        SHA_ROUND(hh, a, b, c, d, e, f, g, t + 1);
        SHA_ROUND(g, hh, a, b, c, d, e, f, t + 2);
        SHA_ROUND(f, g, hh, a, b, c, d, e, t + 3);
        SHA_ROUND(e, f, g, hh, a, b, c, d, t + 4);
        SHA_ROUND(d, e, f, g, hh, a, b, c, t + 5);
        SHA_ROUND(c, d, e, f, g, hh, a, b, t + 6);
        SHA_ROUND(b, c, d, e, f, g, hh, a, t + 7);
    }
    h[0] += a; h[1] += b; h[2] += c; h[3] += d; h[4] += e; h[5] += f; h[6] += g; h[7] += hh;
}
#undef SHA_ROUND

static void sha512(const uint8_t *data, size_t len, uint8_t out[64]) {
    uint64_t h[8];
    memcpy(h, SHA_H, sizeof h);
    size_t done = 0;
    for (; len - done >= 128; done += 128) sha512_block(h, data + done);
    uint8_t last[256];
    size_t rest = len - done;
    size_t total = rest + 1 + 16 <= 128 ? 128 : 256;
    memcpy(last, data + done, rest);
    last[rest] = 0x80;
    memset(last + rest + 1, 0, total - 8 - (rest + 1));
    store_be64(last + total - 8, (uint64_t)len * 8);
    sha512_block(h, last);
    if (total == 256) sha512_block(h, last + 128);
    for (int i = 0; i < 8; i++) store_be64(out + i * 8, h[i]);
}

#define MT_N 624
#define MT_M 397

typedef struct {
    uint32_t mt[MT_N];
    int index;
} Stream;

static void mt_init_genrand(Stream *r, uint32_t s) {
    uint32_t *mt = r->mt;
    mt[0] = s;
    for (int i = 1; i < MT_N; i++) mt[i] = 1812433253U * (mt[i - 1] ^ (mt[i - 1] >> 30)) + (uint32_t)i;
    r->index = MT_N;
}

/* init_genrand(19650218), where every init_by_array starts: computed once */
static uint32_t MT_BASE[MT_N];

static void mt_init_by_array(Stream *r, const uint32_t *key, size_t key_length) {
    uint32_t *mt = r->mt;
    memcpy(mt, MT_BASE, sizeof MT_BASE);
    r->index = MT_N;
    size_t i = 1, j = 0, k = MT_N > key_length ? MT_N : key_length;
    for (; k; k--) {
        mt[i] = (mt[i] ^ ((mt[i - 1] ^ (mt[i - 1] >> 30)) * 1664525U)) + key[j] + (uint32_t)j;
        i++; j++;
        if (i >= MT_N) { mt[0] = mt[MT_N - 1]; i = 1; }
        if (j >= key_length) j = 0;
    }
    for (k = MT_N - 1; k; k--) {
        mt[i] = (mt[i] ^ ((mt[i - 1] ^ (mt[i - 1] >> 30)) * 1566083941U)) - (uint32_t)i;
        i++;
        if (i >= MT_N) { mt[0] = mt[MT_N - 1]; i = 1; }
    }
    mt[0] = 0x80000000U;
}

/* the next 32 bits; the state is twisted one word at a time as it is read (a stream
 * here reads few words: the whole twist would cost more than the reading). Word kk's
 * twist reads words kk + 1 (not yet twisted) and kk + M or kk + M - N (twisted
 * already when below kk), so twisting in reading order gives MT19937's words. */
static inline uint32_t mt_next(Stream *r) {
    static const uint32_t mag01[2] = {0x0U, 0x9908b0dfU};
    uint32_t *mt = r->mt, y;
    int kk = r->index;
    if (kk >= MT_N) kk = 0;
    if (kk < MT_N - MT_M) {
        y = (mt[kk] & 0x80000000U) | (mt[kk + 1] & 0x7fffffffU);
        mt[kk] = mt[kk + MT_M] ^ (y >> 1) ^ mag01[y & 1U];
    } else if (kk < MT_N - 1) {
        y = (mt[kk] & 0x80000000U) | (mt[kk + 1] & 0x7fffffffU);
        mt[kk] = mt[kk + (MT_M - MT_N)] ^ (y >> 1) ^ mag01[y & 1U];
    } else {
        y = (mt[MT_N - 1] & 0x80000000U) | (mt[0] & 0x7fffffffU);
        mt[MT_N - 1] = mt[MT_M - 1] ^ (y >> 1) ^ mag01[y & 1U];
    }
    r->index = kk + 1;
    y = mt[kk];
    y ^= y >> 11;
    y ^= (y << 7) & 0x9d2c5680U;
    y ^= (y << 15) & 0xefc60000U;
    y ^= y >> 18;
    return y;
}

static inline double mt_random(Stream *r) {
    uint32_t a = mt_next(r) >> 5, b = mt_next(r) >> 6;
    return (a * 67108864.0 + b) * (1.0 / 9007199254740992.0);
}

/* random.Random._randbelow(n) for 0 < n < 2**31 */
static inline int mt_randbelow(Stream *r, int n) {
    int k = 0;
    while ((n >> k) != 0) k++;  /* n.bit_length() */
    uint32_t v;
    do v = mt_next(r) >> (32 - k); while (v >= (uint32_t)n);
    return (int)v;
}

/* Seeding. random.Random(text) (version 2) feeds the int of the UTF-8 bytes followed by
 * their SHA-512 to init_by_array: a chain of 1,247 dependent multiplications, the
 * costliest part of a short game (a dealer stream, a deal stream and one stream per seat
 * each game). The chain cannot be shortened without changing every stream, so the
 * streams a round needs are seeded together, up to four chains interleaved (mt_init_lanes): the
 * processor runs independent chains side by side, so four cost about what one does. */
#define KEY_SMALL 64
typedef struct {
    uint32_t small[KEY_SMALL];
    uint32_t *words;  /* small, or a heap block for a long seed */
    size_t len;
} SeedKey;

static void seed_key_free(SeedKey *k) {
    if (k->words && k->words != k->small) PyMem_Free(k->words);
    k->words = NULL;
}

/* the init_by_array key of the seed text ``utf8`` (``len`` bytes); -1 on error */
static int seed_key(SeedKey *k, const char *utf8, size_t len) {
    uint8_t stack[256];
    size_t total = len + 64;
    uint8_t *bytes = total <= sizeof stack ? stack : PyMem_Malloc(total);
    k->words = NULL;
    if (!bytes) { PyErr_NoMemory(); return -1; }
    memcpy(bytes, utf8, len);
    sha512((const uint8_t *)utf8, len, bytes + len);
    /* the big-endian number's significant bytes, then its words least significant first */
    size_t lead = 0;
    while (lead < total && bytes[lead] == 0) lead++;
    size_t sig = total - lead;
    size_t bits = 0;
    if (sig) {
        int top = bytes[lead], b = 0;
        while (top >> b) b++;
        bits = (sig - 1) * 8 + (size_t)b;
    }
    size_t keyused = bits == 0 ? 1 : (bits - 1) / 32 + 1;
    k->words = keyused <= KEY_SMALL ? k->small : PyMem_Malloc(keyused * sizeof(uint32_t));
    if (!k->words) {
        if (bytes != stack) PyMem_Free(bytes);
        PyErr_NoMemory();
        return -1;
    }
    /* whole words from the end (big-endian groups of four bytes), then the top word's bytes */
    size_t whole = sig / 4;
    if (!sig) k->words[0] = 0;  /* the number 0: one word */
    for (size_t i = 0; i < whole; i++) k->words[i] = load_be32(bytes + total - 4 * (i + 1));
    if (sig % 4) {
        uint32_t top = 0;
        for (size_t i = lead; i < total - 4 * whole; i++) top = (top << 8) | bytes[i];
        k->words[whole] = top;
    }
    k->len = keyused;
    if (bytes != stack) PyMem_Free(bytes);
    return 0;
}

/* init_by_array for G <= 4 keys shorter than MT_N at once: mt_init_by_array's loops with
 * the wrap-arounds unrolled (the first loop runs MT_N steps from word 1: words 1..N-1,
 * then word 1 again; the second N-1 steps from word 2: words 2..N-1, then word 1), the
 * G chains interleaved. The first loop's key term, key[j] + j with j cycling through the
 * key, is laid out for all MT_N steps first (kx: the key's words plus their indexes, then
 * copied onto itself), so a step is the chain's arithmetic and one add, without the
 * key's wrap-around. Inlined with G constant (mt_init_1 .. mt_init_4). */
static inline __attribute__((always_inline)) void mt_init_lanes(Stream **r, const SeedKey **key, const int G) {
    uint32_t kx[4][MT_N];
    uint32_t *m[4], p[4];
    for (int c = 0; c < G; c++) {
        const uint32_t *k = key[c]->words;
        const uint32_t l = (uint32_t)key[c]->len;  /* 1 <= l < MT_N */
        for (uint32_t j = 0; j < l; j++) kx[c][j] = k[j] + j;
        for (uint32_t have = l; have < MT_N;) {
            uint32_t more = have <= MT_N - have ? have : MT_N - have;
            memcpy(kx[c] + have, kx[c], more * sizeof(uint32_t));
            have += more;
        }
        m[c] = r[c]->mt;
        p[c] = MT_BASE[0];
    }
    for (int i = 1; i < MT_N; i++) {
        const uint32_t b = MT_BASE[i];
#pragma GCC unroll 4
        for (int c = 0; c < G; c++) {
            p[c] = (b ^ ((p[c] ^ (p[c] >> 30)) * 1664525U)) + kx[c][i - 1];
            m[c][i] = p[c];
        }
    }
    for (int c = 0; c < G; c++) {
        m[c][0] = p[c];
        p[c] = (m[c][1] ^ ((p[c] ^ (p[c] >> 30)) * 1664525U)) + kx[c][MT_N - 1];
        m[c][1] = p[c];
    }
    for (int i = 2; i < MT_N; i++)
#pragma GCC unroll 4
        for (int c = 0; c < G; c++) {
            p[c] = (m[c][i] ^ ((p[c] ^ (p[c] >> 30)) * 1566083941U)) - (uint32_t)i;
            m[c][i] = p[c];
        }
    for (int c = 0; c < G; c++) {
        m[c][0] = p[c];
        p[c] = (m[c][1] ^ ((p[c] ^ (p[c] >> 30)) * 1566083941U)) - 1U;
        m[c][1] = p[c];
        m[c][0] = 0x80000000U;
        r[c]->index = MT_N;
    }
}

static void mt_init_1(Stream **r, const SeedKey **key) { mt_init_lanes(r, key, 1); }
static void mt_init_2(Stream **r, const SeedKey **key) { mt_init_lanes(r, key, 2); }
static void mt_init_3(Stream **r, const SeedKey **key) { mt_init_lanes(r, key, 3); }
static void mt_init_4(Stream **r, const SeedKey **key) { mt_init_lanes(r, key, 4); }
static void (*const MT_INIT[5])(Stream **, const SeedKey **) = {NULL, mt_init_1, mt_init_2, mt_init_3, mt_init_4};

/* seed streams[i] from keys[i], i < count: as random.Random would. The keys shorter than
 * MT_N (all but a seed text of 2.4 kB or more) are seeded in groups of at most four, as
 * even as can be (six streams: three and three), each group's chains interleaved */
static void mt_seed_many(Stream **streams, const SeedKey *keys, int count) {
    Stream *group[MAX_SEATS + 2];
    const SeedKey *gkeys[MAX_SEATS + 2];
    int g = 0;
    for (int i = 0; i < count; i++) {
        if (keys[i].len >= MT_N) {  /* the loop as written */
            mt_init_by_array(streams[i], keys[i].words, keys[i].len);
            continue;
        }
        group[g] = streams[i];
        gkeys[g++] = &keys[i];
    }
    for (int done = 0, groups = (g + 3) / 4; done < g; groups--) {
        int size = (g - done + groups - 1) / groups;
        MT_INIT[size](group + done, gkeys + done);
        done += size;
    }
}

/* random.Random(text) for a str seed (version 2); -1 on error */
static int mt_seed_text(Stream *r, PyObject *text) {
    Py_ssize_t len;
    const char *utf8 = PyUnicode_AsUTF8AndSize(text, &len);
    if (!utf8) return -1;
    SeedKey key;
    if (seed_key(&key, utf8, (size_t)len) < 0) return -1;
    mt_seed_many(&r, &key, 1);
    seed_key_free(&key);
    return 0;
}

/* random.Random.sample(range(n), k) into out */
static void mt_sample(Stream *r, int n, int k, int *out) {
    int setsize = 21;
    if (k > 5) {
        /* 4 ** ceil(log(k * 3, 4)); 3k is never a power of 4, so no rounding question */
        int p = 1;
        while (p < k * 3) p *= 4;
        setsize += p;
    }
    if (n <= setsize) {
        int pool[256];
        for (int i = 0; i < n; i++) pool[i] = i;
        for (int i = 0; i < k; i++) {
            int j = mt_randbelow(r, n - i);
            out[i] = pool[j];
            pool[j] = pool[n - i - 1];
        }
    } else {
        uint8_t selected[256];
        memset(selected, 0, sizeof selected);
        for (int i = 0; i < k; i++) {
            int j = mt_randbelow(r, n);
            while (selected[j]) j = mt_randbelow(r, n);
            selected[j] = 1;
            out[i] = j;
        }
    }
}

/* test hooks: the streams against random.Random (tests/engine/test_compiled.py) */
static PyObject *stream_check(PyObject *m, PyObject *args) {
    PyObject *text;
    int count, below, k;
    if (!PyArg_ParseTuple(args, "Uiii", &text, &count, &below, &k)) return NULL;
    if (below < 1 || k < 0 || k > 108 || count < 0) {
        PyErr_SetString(PyExc_ValueError, "count >= 0, below >= 1, 0 <= k <= 108");
        return NULL;
    }
    Stream r;
    if (mt_seed_text(&r, text) < 0) return NULL;
    PyObject *floats = PyList_New(count);
    if (!floats) return NULL;
    for (int i = 0; i < count; i++) PyList_SET_ITEM(floats, i, PyFloat_FromDouble(mt_random(&r)));
    int v = mt_randbelow(&r, below), out[108];
    mt_sample(&r, DECK_SIZE, k, out);
    PyObject *sample = PyList_New(k);
    if (!sample) { Py_DECREF(floats); return NULL; }
    for (int i = 0; i < k; i++) PyList_SET_ITEM(sample, i, PyLong_FromLong(out[i]));
    return Py_BuildValue("NiNd", floats, v, sample, mt_random(&r));
}

typedef struct {
    PyObject_HEAD
    PyObject *rules, *seed;
    PyObject *events_list, *actions_list, *objs, *aobjs;
    int n, hand_size, number_only, until_playable, draw_limit, rev_skips, wd4, stacking, uno_penalty,
        seven_zero, jump_in, penalty_scoring, max_turns;
    long long target, rounds;
    long long scores[MAX_SEATS];
    int round, dealer, over, decision, seat, current, direction, color, pending, turns;
    uint8_t hand[MAX_SEATS][DECK_SIZE];
    int hlen[MAX_SEATS];
    uint8_t kcnt[MAX_SEATS][NUM_KINDS];
    uint8_t ccnt[MAX_SEATS][4];
    uint8_t uno[MAX_SEATS];
    uint8_t discard[DECK_SIZE];
    int dlen;
    uint8_t in_pile[DECK_SIZE];
    int pile_count;
    uint8_t order[MAX_SEATS][DECK_SIZE];
    Stream *srng;  /* the seats' draw streams (n, allocated apart: 2.5 kB each), seeded at the round's start */
    int pos[MAX_SEATS];
    int drawn_kind, res_player, res_kind, jq[MAX_SEATS], jq_len, jq_head;
    int wd4_player, wd4_honest, stalled, uno_owed;
    int legal_valid, nlegal, legal_uno;
    uint8_t legal[NUM_ACTIONS];
    int32_t *ev;
    Py_ssize_t ev_len, ev_cap, ev_count, ev_done_pos;
    int32_t *ac;
    Py_ssize_t ac_len, ac_cap, ac_count, ac_done_pos;
    Py_ssize_t asked_at;
} Core;

/* ------------------------------------------------------------------ records */
static int ev_reserve(Core *g, Py_ssize_t extra) {
    if (g->ev_len + extra <= g->ev_cap) return 0;
    Py_ssize_t cap = g->ev_cap ? g->ev_cap * 2 : 1024;
    while (cap < g->ev_len + extra) cap *= 2;
    int32_t *p = PyMem_Realloc(g->ev, cap * sizeof(int32_t));
    if (!p) { PyErr_NoMemory(); return -1; }
    g->ev = p; g->ev_cap = cap;
    return 0;
}

/* one event: type, then ``count`` arguments */
static int emit(Core *g, int type, int count, int a, int b, int c, int d) {
    if (ev_reserve(g, 5) < 0) return -1;
    int32_t *p = g->ev + g->ev_len;
    p[0] = type | (count << 8);
    p[1] = a; p[2] = b; p[3] = c; p[4] = d;
    g->ev_len += 1 + count;
    g->ev_count++;
    return 0;
}

/* an event built as a dict now (rare: round start and end, game end, faults) */
static int emit_obj(Core *g, PyObject *dict) {
    if (!dict) return -1;
    Py_ssize_t i = PyList_GET_SIZE(g->objs);
    int r = PyList_Append(g->objs, dict);
    Py_DECREF(dict);
    if (r < 0) return -1;
    return emit(g, E_OBJ, 1, (int)i, 0, 0, 0);
}

static int ac_push(Core *g, int32_t a, int32_t b, int32_t c, int32_t d, int32_t e) {
    if (g->ac_len + 5 > g->ac_cap) {
        Py_ssize_t cap = g->ac_cap ? g->ac_cap * 2 : 512;
        int32_t *p = PyMem_Realloc(g->ac, cap * sizeof(int32_t));
        if (!p) { PyErr_NoMemory(); return -1; }
        g->ac = p; g->ac_cap = cap;
    }
    int32_t *p = g->ac + g->ac_len;
    p[0] = a; p[1] = b; p[2] = c; p[3] = d; p[4] = e;
    g->ac_len += 5;
    g->ac_count++;
    return 0;
}

static PyObject *int_list(const long long *v, int n) {
    PyObject *l = PyList_New(n);
    if (!l) return NULL;
    for (int i = 0; i < n; i++) {
        PyObject *x = PyLong_FromLongLong(v[i]);
        if (!x) { Py_DECREF(l); return NULL; }
        PyList_SET_ITEM(l, i, x);
    }
    return l;
}

static PyObject *codes_list(const uint8_t *ids, int len) {
    PyObject *l = PyList_New(len);
    if (!l) return NULL;
    for (int i = 0; i < len; i++) {
        PyObject *c = CODE[DECK[ids[i]]];
        Py_INCREF(c);
        PyList_SET_ITEM(l, i, c);
    }
    return l;
}

static PyObject *color_obj(int c) {
    PyObject *o = c < 0 ? Py_None : COLOR_STR[c];
    Py_INCREF(o);
    return o;
}

/* dict from alternating key, value (values are stolen; NULL value: error) */
static PyObject *make_dict(int pairs, ...) {
    va_list ap;
    va_start(ap, pairs);
    PyObject *d = NEW_DICT(pairs);
    int ok = d != NULL;
    for (int i = 0; i < pairs; i++) {
        PyObject *k = va_arg(ap, PyObject *);
        PyObject *v = va_arg(ap, PyObject *);
        if (ok && (v == NULL || PyDict_SetItem(d, k, v) < 0)) ok = 0;
        Py_XDECREF(v);
    }
    va_end(ap);
    if (!ok) { Py_XDECREF(d); return NULL; }
    return d;
}

static PyObject *event_dict(const int32_t *p, PyObject *objs) {
    int type = p[0] & 0xff;
    switch (type) {
    case E_TURN: return make_dict(2, S_e, Py_NewRef(S_turn), S_seat, small_int(p[1]));
    case E_PLAY: {
        PyObject *d = make_dict(4, S_e, Py_NewRef(S_play), S_seat, small_int(p[1]),
                                S_card, Py_NewRef(CODE[p[2]]), S_color, Py_NewRef(COLOR_STR[p[3]]));
        if (!d) return NULL;
        if ((p[4] & 1) && PyDict_SetItem(d, S_jump_in, Py_True) < 0) { Py_DECREF(d); return NULL; }
        if ((p[4] & 2) && PyDict_SetItem(d, S_uno, Py_True) < 0) { Py_DECREF(d); return NULL; }
        return d;
    }
    case E_UNO_CAUGHT: return make_dict(2, S_e, Py_NewRef(S_uno_caught), S_seat, small_int(p[1]));
    case E_DRAW: {
        int count = (p[0] >> 8) - 2;
        PyObject *cards = PyList_New(count);
        if (!cards) return NULL;
        for (int i = 0; i < count; i++) PyList_SET_ITEM(cards, i, Py_NewRef(CODE[DECK[p[3 + i]]]));
        return make_dict(4, S_e, Py_NewRef(S_draw), S_seat, small_int(p[1]), S_cards, cards,
                         S_reason, Py_NewRef(REASON_STR[p[2]]));
    }
    case E_RESHUFFLE: return make_dict(2, S_e, Py_NewRef(S_reshuffle), S_cards, small_int(p[1]));
    case E_SKIP: return make_dict(2, S_e, Py_NewRef(S_skip), S_seat, small_int(p[1]));
    case E_DIRECTION: return make_dict(2, S_e, Py_NewRef(S_direction), S_direction, PyLong_FromLong(p[1]));
    case E_PENDING:
        return make_dict(3, S_e, Py_NewRef(S_pending), S_seat, small_int(p[1]), S_cards, small_int(p[2]));
    case E_CHALLENGE:
        return make_dict(4, S_e, Py_NewRef(S_challenge), S_seat, small_int(p[1]), S_target, small_int(p[2]),
                         S_honest, PyBool_FromLong(p[3]));
    case E_PASS: return make_dict(2, S_e, Py_NewRef(S_pass), S_seat, small_int(p[1]));
    case E_SWAP:
        return make_dict(3, S_e, Py_NewRef(S_swap), S_seat, small_int(p[1]), S_target, small_int(p[2]));
    case E_PASS_HANDS: return make_dict(2, S_e, Py_NewRef(S_pass_hands), S_direction, PyLong_FromLong(p[1]));
    case E_COLOR:
        return make_dict(3, S_e, Py_NewRef(S_color), S_seat, small_int(p[1]), S_color, Py_NewRef(COLOR_STR[p[2]]));
    case E_OBJ: return Py_NewRef(PyList_GET_ITEM(objs, p[1]));
    }
    PyErr_SetString(PyExc_SystemError, "engine._core: bad event record");
    return NULL;
}

/* bring ``events`` up to date: turn the compact records not yet read into dicts */
static PyObject *materialize_events(Core *g) {
    if (!g->events_list) {
        g->events_list = PyList_New(0);
        if (!g->events_list) return NULL;
    }
    while (g->ev_done_pos < g->ev_len) {
        const int32_t *p = g->ev + g->ev_done_pos;
        PyObject *d = event_dict(p, g->objs);
        if (!d) return NULL;
        int r = PyList_Append(g->events_list, d);
        Py_DECREF(d);
        if (r < 0) return NULL;
        g->ev_done_pos += 1 + (p[0] >> 8);
    }
    return g->events_list;
}

static PyObject *materialize_actions(Core *g) {
    if (!g->actions_list) {
        g->actions_list = PyList_New(0);
        if (!g->actions_list) return NULL;
    }
    while (g->ac_done_pos < g->ac_len) {
        const int32_t *p = g->ac + g->ac_done_pos;
        PyObject *d;
        if (p[0] < 0) {
            d = Py_NewRef(PyList_GET_ITEM(g->aobjs, p[1]));
        } else {
            d = make_dict(4, S_since, PyLong_FromLong(p[0]), S_seat, small_int(p[1]),
                          S_decision, Py_NewRef(DECISION_STR[p[2]]), S_action,
                          PyDict_Copy(TEMPLATE[p[4]][p[3]]));
        }
        if (!d) return NULL;
        int r = PyList_Append(g->actions_list, d);
        Py_DECREF(d);
        if (r < 0) return NULL;
        g->ac_done_pos += 5;
    }
    return g->actions_list;
}

/* ------------------------------------------------------------------ hands */
static inline void hand_add(Core *g, int s, int c) {
    g->hand[s][g->hlen[s]++] = (uint8_t)c;
    int k = DECK[c];
    g->kcnt[s][k]++;
    if (KIND_COLOR[k] >= 0) g->ccnt[s][KIND_COLOR[k]]++;
}

/* removes the first card of kind k; returns its id */
static inline int hand_remove_kind(Core *g, int s, int k) {
    uint8_t *h = g->hand[s];
    int len = g->hlen[s], i = 0;
    while (i < len && DECK[h[i]] != k) i++;
    int c = h[i];
    memmove(h + i, h + i + 1, (size_t)(len - i - 1));
    g->hlen[s] = len - 1;
    g->kcnt[s][k]--;
    if (KIND_COLOR[k] >= 0) g->ccnt[s][KIND_COLOR[k]]--;
    return c;
}

static void hand_clear(Core *g, int s) {
    g->hlen[s] = 0;
    memset(g->kcnt[s], 0, NUM_KINDS);
    memset(g->ccnt[s], 0, 4);
}

typedef struct {
    uint8_t hand[DECK_SIZE];
    int hlen;
    uint8_t kcnt[NUM_KINDS];
    uint8_t ccnt[4];
} HandCopy;

static inline void hand_save(Core *g, int s, HandCopy *h) {
    memcpy(h->hand, g->hand[s], (size_t)g->hlen[s]);
    h->hlen = g->hlen[s];
    memcpy(h->kcnt, g->kcnt[s], NUM_KINDS);
    memcpy(h->ccnt, g->ccnt[s], 4);
}

static inline void hand_load(Core *g, int s, const HandCopy *h) {
    memcpy(g->hand[s], h->hand, (size_t)h->hlen);
    g->hlen[s] = h->hlen;
    memcpy(g->kcnt[s], h->kcnt, NUM_KINDS);
    memcpy(g->ccnt[s], h->ccnt, 4);
}

/* ------------------------------------------------------------------ rules */
static int start_turn(Core *g, int s);
static int start_round(Core *g);
static int end_round(Core *g, int winner);
static int after_effect(Core *g, int s, int k);
static int advance(Core *g, int s, int k);

static inline void ask(Core *g, int seat, int decision) {
    g->seat = seat;
    g->decision = decision;
    g->legal_valid = 0;
}

/* no card of the active colour (with no colour named yet, as engine.game: no wild) */
static inline int honest(Core *g, int s) {
    if (g->color < 0) return g->kcnt[s][WILD_KIND] == 0 && g->kcnt[s][WD4_KIND] == 0;
    return g->ccnt[s][g->color] == 0;
}

static inline int top_rank(Core *g) { return KIND_RANK[DECK[g->discard[g->dlen - 1]]]; }

static inline int playable(Core *g, int s, int k) {
    int kc = KIND_COLOR[k];
    if (kc >= 0) return kc == g->color || KIND_RANK[k] == top_rank(g);
    return k == WILD_KIND || g->wd4 != 1 || honest(g, s);
}


static int draw_one(Core *g, int s) {
    uint8_t *order = g->order[s];
    int pos = g->pos[s], c;
    Stream *rnd = &g->srng[s];
    /* lazy Fisher-Yates over the seat's private order; cards out of the pile are passed over */
    for (;;) {
        double r = mt_random(rnd);
        int j = pos + (int)(r * (double)(DECK_SIZE - pos));
        c = order[j];
        order[j] = order[pos];
        order[pos] = (uint8_t)c;
        pos++;
        if (g->in_pile[c]) break;
    }
    g->pos[s] = pos;
    g->in_pile[c] = 0;
    g->pile_count--;
    return c;
}

static int reshuffle(Core *g) {
    int moved = g->dlen - 1;
    if (moved <= 0) return 0;
    for (int i = 0; i < moved; i++) g->in_pile[g->discard[i]] = 1;
    g->pile_count += moved;
    g->discard[0] = g->discard[g->dlen - 1];
    g->dlen = 1;
    for (int s = 0; s < g->n; s++) g->pos[s] = 0;
    if (emit(g, E_RESHUFFLE, 1, moved, 0, 0, 0) < 0) return -1;
    return 1;
}

static int emit_draw(Core *g, int s, int reason, const uint8_t *cards, int count) {
    if (ev_reserve(g, 3 + count) < 0) return -1;
    int32_t *p = g->ev + g->ev_len;
    p[0] = E_DRAW | ((2 + count) << 8);
    p[1] = s;
    p[2] = reason;
    for (int i = 0; i < count; i++) p[3 + i] = cards[i];
    g->ev_len += 3 + count;
    g->ev_count++;
    return 0;
}

/* seat s draws ``count`` cards (or until playable); the last card id, -1 for none, -2 on error */
static int draw(Core *g, int s, int count, int reason, int until_playable) {
    uint8_t chunk[DECK_SIZE];
    chunk[0] = 0;
    int nchunk = 0, last = -1, drawn = 0;
    while (drawn < count) {
        if (g->pile_count == 0) {
            if (nchunk) {
                if (emit_draw(g, s, reason, chunk, nchunk) < 0) return -2;
                nchunk = 0;
            }
            int r = reshuffle(g);
            if (r < 0) return -2;
            if (!r) break;
        }
        last = draw_one(g, s);
        if (last < 0) return -2;
        hand_add(g, s, last);
        chunk[nchunk++] = (uint8_t)last;
        drawn++;
        if (until_playable && playable(g, s, DECK[last])) break;
    }
    if (nchunk || drawn == 0) {
        if (emit_draw(g, s, reason, chunk, nchunk) < 0) return -2;
    }
    if (drawn) g->uno[s] = 0;
    return last;
}

/* 1: the turn starts, 0: max_turns ended the round, -1: error */
static int begin_turn(Core *g, int s) {
    g->turns++;
    if (g->turns > g->max_turns) return end_round(g, -1) < 0 ? -1 : 0;
    g->current = s;
    return emit(g, E_TURN, 1, s, 0, 0, 0) < 0 ? -1 : 1;
}

static int start_turn(Core *g, int s) {
    int r = begin_turn(g, s);
    if (r < 0) return -1;
    if (r) ask(g, s, D_PLAY);
    return 0;
}

static int go_out(Core *g, int s, int k) {
    int rank = KIND_RANK[k];
    if (rank == DRAW_TWO || rank == WILD_DRAW_FOUR) {
        int value = rank == DRAW_TWO ? 2 : 4;
        int amount = g->stacking == 2 ? g->pending + value : value;
        g->pending = 0;
        if (draw(g, mod(s + g->direction, g->n), amount, R_PENALTY, 0) == -2) return -1;
    }
    return end_round(g, s);
}

static int draw_owed_uno(Core *g) {
    int s = g->uno_owed;
    if (s >= 0) {
        g->uno_owed = -1;
        if (draw(g, s, g->uno_penalty, R_UNO, 0) == -2) return -1;
    }
    return 0;
}

static int play(Core *g, int s, int k, int color, int uno, int jump) {
    if (k == WD4_KIND && g->wd4 == 0) {
        g->wd4_player = s;
        g->wd4_honest = honest(g, s);
    }
    int c = hand_remove_kind(g, s, k);
    g->discard[g->dlen++] = (uint8_t)c;
    g->color = color;
    int left = g->hlen[s], rank = KIND_RANK[k], owed = 0;
    if (left == 1) {
        if (emit(g, E_PLAY, 4, s, k, color, jump | (uno ? 2 : 0)) < 0) return -1;
        g->uno[s] = (uint8_t)uno;
        if (!uno) {
            if (emit(g, E_UNO_CAUGHT, 1, s, 0, 0, 0) < 0) return -1;
            if (g->uno_penalty) {
                if (g->seven_zero && (rank == 0 || rank == 7)) owed = 1;
                else if (draw(g, s, g->uno_penalty, R_UNO, 0) == -2) return -1;
            }
        }
    } else {
        if (emit(g, E_PLAY, 4, s, k, color, jump) < 0) return -1;
        g->uno[s] = 0;
        if (!left) return go_out(g, s, k);
    }
    if (rank == REVERSE) {
        g->direction = -g->direction;
        if (emit(g, E_DIRECTION, 1, g->direction, 0, 0, 0) < 0) return -1;
    } else if (g->seven_zero) {
        if (rank == 0) {
            int n = g->n, d = g->direction;
            HandCopy old[MAX_SEATS];
            for (int i = 0; i < n; i++) hand_save(g, i, &old[i]);
            for (int i = 0; i < n; i++) hand_load(g, i, &old[mod(i - d, n)]);
            memset(g->uno, 0, sizeof g->uno);
            if (emit(g, E_PASS_HANDS, 1, d, 0, 0, 0) < 0) return -1;
            if (owed && draw(g, s, g->uno_penalty, R_UNO, 0) == -2) return -1;
        } else if (rank == 7) {
            if (owed) g->uno_owed = s;
            g->res_player = s;
            g->res_kind = k;
            ask(g, s, D_SWAP_TARGET);
            return 0;
        }
    }
    return g->jump_in ? after_effect(g, s, k) : advance(g, s, k);
}

static int after_effect(Core *g, int s, int k) {
    if (g->jump_in && KIND_COLOR[k] >= 0) {
        int n = g->n, d = g->direction;
        g->jq_len = g->jq_head = 0;
        for (int step = 1; step < n; step++) {
            int seat = mod(s + step * d, n);
            if (g->kcnt[seat][k]) g->jq[g->jq_len++] = seat;
        }
        if (g->jq_len) {
            g->res_player = s;
            g->res_kind = k;
            ask(g, g->jq[g->jq_head++], D_JUMP_IN);
            return 0;
        }
    }
    return advance(g, s, k);
}

/* answers to a pending draw: action ids into out, sorted; their count */
static int answers(Core *g, int s, uint8_t *out) {
    int tr = top_rank(g), m = 0;
    for (int k = 0; k < NUM_KINDS; k++) {
        if (!g->kcnt[s][k]) continue;
        if (KIND_RANK[k] == DRAW_TWO && (tr == DRAW_TWO || KIND_COLOR[k] == g->color)) {
            out[m++] = (uint8_t)play_id(k, KIND_COLOR[k]);
        } else if (k == WD4_KIND && g->stacking == 2 && (g->wd4 != 1 || honest(g, s))) {
            for (int c = 0; c < 4; c++) out[m++] = (uint8_t)play_id(k, c);
        }
    }
    return m;
}

static int take_penalty(Core *g, int v) {
    int amount = g->pending;
    g->pending = 0;
    if (draw(g, v, amount, R_PENALTY, 0) == -2) return -1;
    if (emit(g, E_SKIP, 1, v, 0, 0, 0) < 0) return -1;
    return start_turn(g, mod(v + g->direction, g->n));
}

static int penalty(Core *g, int v) {
    uint8_t tmp[NUM_ACTIONS];
    if (g->stacking != 0 && answers(g, v, tmp)) {
        int r = begin_turn(g, v);
        if (r < 0) return -1;
        if (r) {
            if (emit(g, E_PENDING, 2, v, g->pending, 0, 0) < 0) return -1;
            ask(g, v, D_STACK);
        }
        return 0;
    }
    return take_penalty(g, v);
}

static int advance(Core *g, int s, int k) {
    int n = g->n, d = g->direction, nxt = mod(s + d, n), rank = KIND_RANK[k];
    if (rank <= 9 || rank == WILD) return start_turn(g, nxt);
    if (rank == SKIP) {
        if (emit(g, E_SKIP, 1, nxt, 0, 0, 0) < 0) return -1;
        return start_turn(g, mod(nxt + d, n));
    }
    if (rank == REVERSE) {
        if (n == 2 && g->rev_skips) {
            if (emit(g, E_SKIP, 1, nxt, 0, 0, 0) < 0) return -1;
            return start_turn(g, s);
        }
        return start_turn(g, nxt);
    }
    if (rank == DRAW_TWO) {
        g->pending = g->stacking == 2 ? g->pending + 2 : 2;
        return penalty(g, nxt);
    }
    if (g->wd4 == 0) {
        int r = begin_turn(g, nxt);
        if (r < 0) return -1;
        if (r) {
            g->pending = 4;
            if (emit(g, E_PENDING, 2, nxt, 4, 0, 0) < 0) return -1;
            ask(g, nxt, D_CHALLENGE);
        }
        return 0;
    }
    g->pending = g->stacking == 2 ? g->pending + 4 : 4;
    return penalty(g, nxt);
}

static int turn_draw(Core *g, int s) {
    int last = g->until_playable ? draw(g, s, g->draw_limit, R_DRAW, 1) : draw(g, s, 1, R_DRAW, 0);
    if (last == -2) return -1;
    if (last >= 0 && playable(g, s, DECK[last])) {
        g->drawn_kind = DECK[last];
        ask(g, s, D_PLAY_DRAWN);
        return 0;
    }
    return start_turn(g, mod(s + g->direction, g->n));
}

static void compute_ranks(Core *g, long *ranks) {
    long long keys[MAX_SEATS];
    for (int s = 0; s < g->n; s++) keys[s] = g->penalty_scoring ? g->scores[s] : -g->scores[s];
    for (int s = 0; s < g->n; s++) {
        long r = 1;
        for (int o = 0; o < g->n; o++) r += keys[o] < keys[s];
        ranks[s] = r;
    }
}

static int end_round(Core *g, int winner) {
    int n = g->n;
    long long left[MAX_SEATS], gained[MAX_SEATS], total = 0;
    for (int s = 0; s < n; s++) {
        long long p = 0;
        for (int i = 0; i < g->hlen[s]; i++) p += KIND_POINTS[DECK[g->hand[s][i]]];
        left[s] = p;
        total += p;
        gained[s] = 0;
    }
    if (winner >= 0) {
        if (!g->penalty_scoring) gained[winner] = total;
        else memcpy(gained, left, sizeof(long long) * (size_t)n);
    }
    for (int s = 0; s < n; s++) g->scores[s] += gained[s];
    g->pending = 0;
    PyObject *w = winner >= 0 ? small_int(winner) : Py_NewRef(Py_None);
    if (emit_obj(g, make_dict(6, S_e, Py_NewRef(S_round_end), S_round, PyLong_FromLong(g->round), S_winner, w,
                              S_reason, Py_NewRef(winner >= 0 ? S_out : S_max_turns),
                              S_points, int_list(gained, n), S_scores, int_list(g->scores, n))) < 0)
        return -1;
    g->stalled = winner < 0 ? g->stalled + 1 : 0;
    int done;
    if (g->rounds >= 0) done = g->round >= g->rounds;
    else {
        long long best = g->scores[0];
        for (int s = 1; s < n; s++) if (g->scores[s] > best) best = g->scores[s];
        done = best >= g->target;
    }
    if (done || g->stalled >= MAX_STALLED_ROUNDS) {
        g->over = 1;
        g->decision = D_NONE;
        g->seat = -1;
        g->legal_valid = 1;
        g->nlegal = 0;
        long ranks[MAX_SEATS];
        compute_ranks(g, ranks);
        long long r64[MAX_SEATS];
        for (int s = 0; s < n; s++) r64[s] = ranks[s];
        return emit_obj(g, make_dict(3, S_e, Py_NewRef(S_game_end), S_scores, int_list(g->scores, n),
                                     S_ranks, int_list(r64, n)));
    }
    return start_round(g);
}

static int open_round(Core *g, int top, Stream *rng) {
    int n = g->n;
    uint8_t returned[DECK_SIZE];
    int nret = 0;
    for (;;) {
        int unfit = g->number_only ? KIND_RANK[DECK[top]] > 9 : DECK[top] == WD4_KIND;
        if (!unfit) break;
        uint8_t pile[DECK_SIZE + 1];
        int m = 0, fit = 0;
        for (int c = 0; c < DECK_SIZE; c++) if (g->in_pile[c]) pile[m++] = (uint8_t)c;
        pile[m++] = (uint8_t)top;
        for (int i = 0; i < m; i++) {
            int k = DECK[pile[i]];
            if (!(g->number_only ? KIND_RANK[k] > 9 : k == WD4_KIND)) { fit = 1; break; }
        }
        if (!fit) {
            PyErr_SetString(PyExc_ValueError, "setup: no card left that may start the pile");
            return -1;
        }
        returned[nret++] = (uint8_t)top;
        g->in_pile[top] = 1;
        double r = mt_random(rng);
        top = pile[(int)(r * (double)m)];
        g->in_pile[top] = 0;
    }
    int count = 0;
    for (int c = 0; c < DECK_SIZE; c++) count += g->in_pile[c];
    g->pile_count = count;
    g->discard[0] = (uint8_t)top;
    g->dlen = 1;
    int top_kind = DECK[top];
    g->direction = 1;
    g->pending = 0;
    g->turns = 0;
    memset(g->uno, 0, sizeof g->uno);
    g->color = KIND_COLOR[top_kind];
    for (int s = 0; s < MAX_SEATS; s++) g->pos[s] = 0;
    /* the round_start event */
    PyObject *hands = PyList_New(n);
    if (!hands) return -1;
    for (int s = 0; s < n; s++) {
        PyObject *h = codes_list(g->hand[s], g->hlen[s]);
        if (!h) { Py_DECREF(hands); return -1; }
        PyList_SET_ITEM(hands, s, h);
    }
    if (emit_obj(g, make_dict(9, S_e, Py_NewRef(S_round_start), S_round, PyLong_FromLong(g->round),
                              S_dealer, small_int(g->dealer), S_hands, hands, S_returned, codes_list(returned, nret),
                              S_top, Py_NewRef(CODE[top_kind]), S_color, color_obj(g->color),
                              S_draw_pile, small_int(g->pile_count), S_scores, int_list(g->scores, n))) < 0)
        return -1;
    int first = (g->dealer + 1) % n, rank = KIND_RANK[top_kind];
    if (rank <= 9) return start_turn(g, first);
    if (rank == SKIP) {
        if (emit(g, E_SKIP, 1, first, 0, 0, 0) < 0) return -1;
        return start_turn(g, (first + 1) % n);
    }
    if (rank == REVERSE) {
        g->direction = -1;
        if (emit(g, E_DIRECTION, 1, -1, 0, 0, 0) < 0) return -1;
        return start_turn(g, g->dealer);
    }
    if (rank == DRAW_TWO) {
        if (draw(g, first, 2, R_PENALTY, 0) == -2) return -1;
        if (emit(g, E_SKIP, 1, first, 0, 0, 0) < 0) return -1;
        return start_turn(g, (first + 1) % n);
    }
    int r = begin_turn(g, first);
    if (r < 0) return -1;
    if (r) ask(g, first, D_CHOOSE_COLOR);
    return 0;
}

/* the decimal text of ``v`` written at ``out`` (room for 20 characters), its length: str(v) */
static size_t decimal(char *out, long long v) {
    char digits[20];
    unsigned long long u = v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v;
    size_t n = 0, m = 0;
    do { digits[n++] = (char)('0' + u % 10); u /= 10; } while (u);
    if (v < 0) out[m++] = '-';
    while (n) out[m++] = digits[--n];
    return m;
}

/* the round's streams, seeded together (mt_seed_many): the deal's, each seat's draw
 * stream and, in round 1, the dealer's (engine.game: Random(f"{seed}:dealer"),
 * Random(f"{seed}:{round}"), Random(f"{deal_seed}:seat:{s}")); -1 on error. The texts are written
 * in a buffer (their keys are their UTF-8 bytes): str(seed), by ``decimal`` for an int of 64 bits
 * (every match's seed: no str objects, PyUnicode_FromFormat and snprintf cost about 7,000
 * instructions a game), then ":{round}", ":seat:{s}" or ":dealer" */
static int seed_round(Core *g, Stream *deal, Stream *dealer) {
    enum { TAIL = 48 };  /* ":{round}:seat:{s}" at most: 1 + 20 + 6 + 20 (":dealer" is shorter) */
    char small[256], *text = small;
    size_t len;
    long long seed = 0;
    int overflow = 1;
    if (PyLong_CheckExact(g->seed)) {
        seed = PyLong_AsLongLongAndOverflow(g->seed, &overflow);
        if (seed == -1 && PyErr_Occurred()) return -1;
    }
    if (!overflow) {
        len = decimal(text, seed);
    } else {
        PyObject *str = PyObject_Str(g->seed);
        Py_ssize_t n;
        const char *utf8 = str ? PyUnicode_AsUTF8AndSize(str, &n) : NULL;
        if (!utf8) { Py_XDECREF(str); return -1; }
        len = (size_t)n;
        if (len + TAIL > sizeof small && !(text = PyMem_Malloc(len + TAIL))) {
            Py_DECREF(str);
            PyErr_NoMemory();
            return -1;
        }
        memcpy(text, utf8, len);  /* the seed's text as it is (a str may hold a NUL) */
        Py_DECREF(str);
    }
    SeedKey keys[MAX_SEATS + 2];
    Stream *streams[MAX_SEATS + 2];
    int count = 0, rc = -1;
    size_t deal_len = len;
    text[deal_len++] = ':';
    deal_len += decimal(text + deal_len, g->round);
    if (seed_key(&keys[count], text, deal_len) < 0) goto done;
    streams[count++] = deal;
    for (int s = 0; s < g->n; s++) {
        size_t m = deal_len;
        memcpy(text + m, ":seat:", 6);
        m += 6;
        m += decimal(text + m, s);
        if (seed_key(&keys[count], text, m) < 0) goto done;
        streams[count++] = &g->srng[s];
    }
    if (dealer) {
        memcpy(text + len, ":dealer", 7);
        if (seed_key(&keys[count], text, len + 7) < 0) goto done;
        streams[count++] = dealer;
    }
    mt_seed_many(streams, keys, count);
    for (int s = 0; s < g->n; s++) memcpy(g->order[s], IDENTITY, DECK_SIZE);
    rc = 0;
done:
    if (text != small) PyMem_Free(text);
    for (int i = 0; i < count; i++) seed_key_free(&keys[i]);
    return rc;
}

static int start_round(Core *g) {
    int n = g->n, h = g->hand_size;
    g->round++;
    if (g->round > 1) g->dealer = (g->dealer + 1) % n;
    Stream rng, dealer;
    if (seed_round(g, &rng, g->round == 1 ? &dealer : NULL) < 0) return -1;
    if (g->round == 1) g->dealer = mt_randbelow(&dealer, n);
    int ids[DECK_SIZE];
    mt_sample(&rng, DECK_SIZE, n * h + 1, ids);
    memset(g->in_pile, 1, DECK_SIZE);
    for (int s = 0; s < n; s++) {
        hand_clear(g, s);
        for (int i = 0; i < h; i++) hand_add(g, s, ids[s * h + i]);
    }
    for (int i = 0; i < n * h + 1; i++) g->in_pile[ids[i]] = 0;
    return open_round(g, ids[n * h], &rng);
}

/* ------------------------------------------------------------------ decisions */
static void compute_legal(Core *g) {
    if (g->legal_valid) return;
    int s = g->seat, m = 0;
    uint8_t *out = g->legal;
    switch (g->decision) {
    case D_PLAY: {
        int color = g->color, tr = top_rank(g);
        const uint8_t *cnt = g->kcnt[s], *kinds = MATCH_KINDS[color + 1][tr];
        for (int j = 0, nk = MATCH_N[color + 1][tr]; j < nk; j++)  /* (KIND_COLOR[k] == color || KIND_RANK[k] == tr) */
            if (cnt[kinds[j]]) out[m++] = (uint8_t)(A_PLAY0 + kinds[j]);
        if (cnt[WILD_KIND]) for (int c = 0; c < 4; c++) out[m++] = (uint8_t)(56 + c);
        if (cnt[WD4_KIND] && (g->wd4 != 1 || honest(g, s))) for (int c = 0; c < 4; c++) out[m++] = (uint8_t)(60 + c);
        out[m++] = A_DRAW;
        break;
    }
    case D_PLAY_DRAWN: {
        int k = g->drawn_kind;
        if (KIND_COLOR[k] >= 0) out[m++] = (uint8_t)play_id(k, KIND_COLOR[k]);
        else for (int c = 0; c < 4; c++) out[m++] = (uint8_t)play_id(k, c);
        out[m++] = A_PASS;
        break;
    }
    case D_STACK:
        m = answers(g, s, out);
        out[m++] = A_ACCEPT;
        break;
    case D_CHALLENGE:
        out[m++] = A_ACCEPT;
        out[m++] = A_CHALLENGE;
        break;
    case D_JUMP_IN:
        out[m++] = (uint8_t)play_id(g->res_kind, KIND_COLOR[g->res_kind]);
        out[m++] = A_PASS;
        break;
    case D_SWAP_TARGET:
        for (int t = 0; t < g->n; t++) if (t != s) out[m++] = (uint8_t)(A_SWAP0 + t);
        break;
    case D_CHOOSE_COLOR:
        for (int c = 0; c < 4; c++) out[m++] = (uint8_t)(A_COLOR0 + c);
        break;
    default:
        break;
    }
    g->nlegal = m;
    g->legal_uno = g->decision >= 0 && g->hlen[s] == 2;
    g->legal_valid = 1;
}

static int do_act(Core *g, int id, int uno, int lose_turn) {
    int s = g->seat, n = g->n, dec = g->decision;
    switch (dec) {
    case D_PLAY: case D_PLAY_DRAWN: case D_STACK:
        if (id_is_play(id)) return play(g, s, id_kind(id), id_color(id), uno, 0);
        if (id == A_DRAW) return turn_draw(g, s);
        if (id == A_PASS) {
            if (emit(g, E_PASS, 1, s, 0, 0, 0) < 0) return -1;
            return start_turn(g, mod(s + g->direction, n));
        }
        return take_penalty(g, s);
    case D_CHALLENGE: {
        if (id == A_ACCEPT) return take_penalty(g, s);
        int p = g->wd4_player, h = g->wd4_honest;
        g->pending = 0;
        if (emit(g, E_CHALLENGE, 3, s, p, h, 0) < 0) return -1;
        if (h) {
            if (draw(g, s, 6, R_CHALLENGE, 0) == -2) return -1;
            if (emit(g, E_SKIP, 1, s, 0, 0, 0) < 0) return -1;
            return start_turn(g, mod(s + g->direction, n));
        }
        if (draw(g, p, 4, R_CHALLENGE, 0) == -2) return -1;
        ask(g, s, D_PLAY);
        return 0;
    }
    case D_JUMP_IN: {
        int player = g->res_player, k = g->res_kind;
        if (id_is_play(id)) {
            g->jq_len = g->jq_head = 0;
            if (g->stacking == 2 && KIND_RANK[k] == DRAW_TWO) g->pending += 2;
            int r = begin_turn(g, s);
            if (r <= 0) return r;
            return play(g, s, k, id_color(id), uno, 1);
        }
        if (emit(g, E_PASS, 1, s, 0, 0, 0) < 0) return -1;
        if (g->jq_head < g->jq_len) {
            ask(g, g->jq[g->jq_head++], D_JUMP_IN);
            return 0;
        }
        return advance(g, player, k);
    }
    case D_SWAP_TARGET: {
        int t = id - A_SWAP0;
        HandCopy a, b;
        hand_save(g, s, &a);
        hand_save(g, t, &b);
        hand_load(g, s, &b);
        hand_load(g, t, &a);
        g->uno[s] = g->uno[t] = 0;
        if (emit(g, E_SWAP, 2, s, t, 0, 0) < 0) return -1;
        if (draw_owed_uno(g) < 0) return -1;
        return after_effect(g, g->res_player, g->res_kind);
    }
    case D_CHOOSE_COLOR: {
        int c = id - A_COLOR0;
        g->color = c;
        if (emit(g, E_COLOR, 2, s, c, 0, 0) < 0) return -1;
        if (lose_turn) return start_turn(g, mod(s + g->direction, n));
        ask(g, s, D_PLAY);
        return 0;
    }
    }
    PyErr_SetString(PyExc_SystemError, "engine._core: no decision pending");
    return -1;
}

/* record and carry out the legal action ``id`` of the seat asked now */
static int commit(Core *g, int id, int uno) {
    Py_ssize_t at = g->ev_count;
    if (ac_push(g, (int32_t)(at - g->asked_at), g->seat, g->decision, id, uno) < 0) return -1;
    g->asked_at = at;
    return do_act(g, id, uno, 0);
}

static int legal_index(Core *g, int id) {
    compute_legal(g);
    for (int i = 0; i < g->nlegal; i++) if (g->legal[i] == id) return i;
    return -1;
}

/* the legal action a reply stands for (engine.game.Game._match), -1 for none, -2 on error */
static PyObject *items_dict(PyObject *mapping);

static int match_action(Core *g, PyObject *action, int *uno) {
    *uno = 0;
    if (Py_IS_TYPE(action, &PyDictProxy_Type)) {
        /* a snapshot's view of a listed action; any other read-only view is parsed like a dict */
        compute_legal(g);
        PyObject **views = VIEW[g->legal_uno];
        for (int i = 0; i < g->nlegal; i++) {
            if (views[g->legal[i]] == action) {
                *uno = g->legal_uno;
                return g->legal[i];
            }
        }
        PyObject *d = items_dict(action);
        if (!d) return -2;
        int id = match_action(g, d, uno);
        Py_DECREF(d);
        return id;
    }
    if (!PyDict_CheckExact(action)) return -1;
    int has_uno = PyDict_Contains(action, S_uno);
    if (has_uno < 0) return -2;
    Py_ssize_t size = PyDict_GET_SIZE(action) - has_uno;
    PyObject *t = PyDict_GetItemWithError(action, S_type);
    if (!t) return PyErr_Occurred() ? -2 : -1;
    if (!PyUnicode_Check(t)) return -1;
    int id = -1;
    if (PyUnicode_Compare(t, S_play) == 0) {
        PyObject *code = PyDict_GetItemWithError(action, S_card);
        if (!code) return PyErr_Occurred() ? -2 : -1;
        if (!PyUnicode_CheckExact(code)) return -1;
        PyObject *kobj = PyDict_GetItemWithError(KIND_BY_CODE, code);
        if (!kobj) return PyErr_Occurred() ? -2 : -1;
        int k = (int)PyLong_AsLong(kobj);
        if (KIND_COLOR[k] >= 0) {
            if (size != 2) return -1;
            id = play_id(k, KIND_COLOR[k]);
        } else {
            if (size != 3) return -1;
            PyObject *color = PyDict_GetItemWithError(action, S_color);
            if (!color) return PyErr_Occurred() ? -2 : -1;
            if (!PyUnicode_CheckExact(color)) return -1;
            int ci = -1;
            for (int c = 0; c < 4; c++) if (PyUnicode_Compare(color, COLOR_STR[c]) == 0) ci = c;
            if (ci < 0) return -1;
            id = play_id(k, ci);
        }
        if (legal_index(g, id) < 0) return -1;
        PyObject *u = PyDict_GetItemWithError(action, S_uno);
        if (!u && PyErr_Occurred()) return -2;
        *uno = u == Py_True;
        return id;
    }
    if (!PyUnicode_CheckExact(t)) return -1;
    if (PyUnicode_Compare(t, S_draw) == 0) id = A_DRAW;
    else if (PyUnicode_Compare(t, S_pass) == 0) id = A_PASS;
    else if (PyUnicode_Compare(t, S_accept) == 0) id = A_ACCEPT;
    else if (PyUnicode_Compare(t, S_challenge) == 0) id = A_CHALLENGE;
    if (id >= 0) return size == 1 && legal_index(g, id) >= 0 ? id : -1;
    if (PyUnicode_Compare(t, S_swap) == 0 && g->decision == D_SWAP_TARGET) {
        PyObject *target = PyDict_GetItemWithError(action, S_target);
        if (!target) return PyErr_Occurred() ? -2 : -1;
        if (size != 2 || !PyLong_CheckExact(target)) return -1;
        int overflow = 0;
        long v = PyLong_AsLongAndOverflow(target, &overflow);
        if (overflow || v < 0 || v >= MAX_SEATS) return -1;
        id = A_SWAP0 + (int)v;
        return legal_index(g, id) >= 0 ? id : -1;
    }
    if (PyUnicode_Compare(t, S_color) == 0 && g->decision == D_CHOOSE_COLOR) {
        PyObject *color = PyDict_GetItemWithError(action, S_color);
        if (!color) return PyErr_Occurred() ? -2 : -1;
        if (size != 2 || !PyUnicode_CheckExact(color)) return -1;
        for (int c = 0; c < 4; c++) if (PyUnicode_Compare(color, COLOR_STR[c]) == 0) return A_COLOR0 + c;
    }
    return -1;
}

static PyObject *illegal(Core *g, const char *what, PyObject *value) {
    PyObject *r = PyObject_CallFunction(HOOK_ILLEGAL, "OsO", (PyObject *)g, what, value);
    Py_XDECREF(r);
    if (!PyErr_Occurred()) PyErr_SetString(PyExc_SystemError, "engine._core: the illegal-action hook did not raise");
    return NULL;
}

/* ------------------------------------------------------------------ Python methods */
static PyObject *rules_attr(PyObject *rules, const char *name, long *out) {
    PyObject *v = PyObject_GetAttrString(rules, name);
    if (!v) return NULL;
    if (out) {
        *out = PyLong_AsLong(v);
        if (*out == -1 && PyErr_Occurred()) { Py_DECREF(v); return NULL; }
    }
    return v;
}

static int str_is(PyObject *v, const char *text) {
    return PyUnicode_Check(v) && PyUnicode_CompareWithASCIIString(v, text) == 0;
}

/* the options of engine.rules.Rules the core reads */
typedef struct {
    int n, hand_size, number_only, until_playable, draw_limit, rev_skips, wd4, stacking, uno_penalty, seven_zero,
        jump_in, penalty_scoring, max_turns;
    long long target, rounds;
} Opts;
static PyObject *OPTS_RULES;  /* the Rules object OPTS were read from (engine.rules.Rules is frozen) */
static Opts OPTS;

static int parse_rules(PyObject *rules, Opts *opt) {
    long v;
    PyObject *o;
#define INT_OPT(field, name) \
    if (!(o = rules_attr(rules, name, &v))) return -1; \
    Py_DECREF(o); opt->field = (int)v;
    INT_OPT(n, "players")
    INT_OPT(hand_size, "hand_size")
    INT_OPT(draw_limit, "draw_limit")
    INT_OPT(rev_skips, "two_player_reverse_skips")
    INT_OPT(uno_penalty, "uno_penalty")
    INT_OPT(seven_zero, "seven_zero")
    INT_OPT(jump_in, "jump_in")
    INT_OPT(max_turns, "max_turns")
#undef INT_OPT
    if (opt->n < 2 || opt->n > MAX_SEATS || opt->hand_size < 1 || opt->n * opt->hand_size + 1 > DECK_SIZE) {
        PyErr_SetString(PyExc_ValueError, "engine._core: rules out of bounds");
        return -1;
    }
    if (!(o = rules_attr(rules, "first_card", NULL))) return -1;
    opt->number_only = str_is(o, "number_only");
    Py_DECREF(o);
    if (!(o = rules_attr(rules, "draw", NULL))) return -1;
    opt->until_playable = str_is(o, "until_playable");
    Py_DECREF(o);
    if (!(o = rules_attr(rules, "wd4", NULL))) return -1;
    opt->wd4 = str_is(o, "challenge") ? 0 : str_is(o, "enforced") ? 1 : 2;
    Py_DECREF(o);
    if (!(o = rules_attr(rules, "stacking", NULL))) return -1;
    opt->stacking = str_is(o, "off") ? 0 : str_is(o, "deflect") ? 1 : 2;
    Py_DECREF(o);
    if (!(o = rules_attr(rules, "scoring", NULL))) return -1;
    opt->penalty_scoring = str_is(o, "penalty");
    Py_DECREF(o);
    if (!(o = rules_attr(rules, "target", NULL))) return -1;
    opt->target = o == Py_None ? 0 : PyLong_AsLongLong(o);
    Py_DECREF(o);
    if (!(o = rules_attr(rules, "rounds", NULL))) return -1;
    opt->rounds = o == Py_None ? -1 : PyLong_AsLongLong(o);
    Py_DECREF(o);
    return PyErr_Occurred() ? -1 : 0;
}

static int core_init(Core *g, PyObject *args, PyObject *kwds) {
    static char *kwlist[] = {"rules", "seed", NULL};
    PyObject *rules, *seed;
    if (!kwds && PyTuple_GET_SIZE(args) == 2) {  /* Game(rules, seed), every referee's call: no parsing */
        rules = PyTuple_GET_ITEM(args, 0);
        seed = PyTuple_GET_ITEM(args, 1);
    } else if (!PyArg_ParseTupleAndKeywords(args, kwds, "OO", kwlist, &rules, &seed)) {
        return -1;
    }
    if (rules != OPTS_RULES && RULES_TYPE && !PyObject_TypeCheck(rules, (PyTypeObject *)RULES_TYPE)) {
        PyErr_Format(PyExc_TypeError, "rules must be engine.rules.Rules, got %s", Py_TYPE(rules)->tp_name);
        return -1;
    }
    if (g->rules) {
        PyErr_SetString(PyExc_RuntimeError, "a compiled game is initialised once");
        return -1;
    }
    if (rules != OPTS_RULES) {  /* a Rules is frozen: the last one's options are kept, parsed */
        Opts parsed;  /* parsed apart: reading attributes may run Python code, and another game's init */
        if (parse_rules(rules, &parsed) < 0) return -1;
        OPTS = parsed;
        Py_XSETREF(OPTS_RULES, Py_NewRef(rules));
    }
    const Opts *o = &OPTS;
    g->n = o->n; g->hand_size = o->hand_size; g->number_only = o->number_only;
    g->until_playable = o->until_playable; g->draw_limit = o->draw_limit; g->rev_skips = o->rev_skips;
    g->wd4 = o->wd4; g->stacking = o->stacking; g->uno_penalty = o->uno_penalty; g->seven_zero = o->seven_zero;
    g->jump_in = o->jump_in; g->penalty_scoring = o->penalty_scoring; g->max_turns = o->max_turns;
    g->target = o->target; g->rounds = o->rounds;

    if (!(g->srng = PyMem_Malloc((size_t)g->n * sizeof(Stream)))) {
        PyErr_NoMemory();
        return -1;
    }
    g->rules = Py_NewRef(rules);
    g->seed = Py_NewRef(seed);
    if (!(g->objs = PyList_New(0)) || !(g->aobjs = PyList_New(0))) return -1;
    g->decision = D_NONE;
    g->seat = -1;
    g->direction = 1;
    g->color = -1;
    g->drawn_kind = g->res_player = g->res_kind = -1;
    g->wd4_player = -1;
    g->uno_owed = -1;
    return start_round(g);
}

static void core_dealloc(Core *g) {
    Py_XDECREF(g->rules);
    Py_XDECREF(g->seed);
    Py_XDECREF(g->events_list);
    Py_XDECREF(g->actions_list);
    Py_XDECREF(g->objs);
    Py_XDECREF(g->aobjs);
    PyMem_Free(g->ev);
    PyMem_Free(g->ac);
    PyMem_Free(g->srng);
    Py_TYPE(g)->tp_free((PyObject *)g);
}

static int check_ready(Core *g) {
    if (!g->rules) {
        PyErr_SetString(PyExc_RuntimeError, "engine._core: game not initialised");
        return -1;
    }
    return 0;
}

static PyObject *legal_dicts(Core *g) {
    compute_legal(g);
    PyObject *l = PyList_New(g->nlegal);
    if (!l) return NULL;
    PyObject **table = TEMPLATE[g->legal_uno];
    for (int i = 0; i < g->nlegal; i++) {
        PyObject *d = PyDict_Copy(table[g->legal[i]]);
        if (!d) { Py_DECREF(l); return NULL; }
        PyList_SET_ITEM(l, i, d);
    }
    return l;
}

static PyObject *core_legal_actions(Core *g, PyObject *unused) {
    if (check_ready(g) < 0) return NULL;
    if (g->over) return PyList_New(0);
    return legal_dicts(g);
}

static PyObject *core_legal_action_ids(Core *g, PyObject *unused) {
    if (check_ready(g) < 0) return NULL;
    if (g->over) return PyList_New(0);
    compute_legal(g);
    PyObject *l = PyList_New(g->nlegal);
    if (!l) return NULL;
    for (int i = 0; i < g->nlegal; i++) PyList_SET_ITEM(l, i, small_int(g->legal[i]));
    return l;
}

static PyObject *hand_sizes(Core *g) {
    PyObject *l = PyList_New(g->n);
    if (!l) return NULL;
    for (int s = 0; s < g->n; s++) PyList_SET_ITEM(l, s, small_int(g->hlen[s]));
    return l;
}

static PyObject *uno_list(Core *g) {
    PyObject *l = PyList_New(g->n);
    if (!l) return NULL;
    for (int s = 0; s < g->n; s++) PyList_SET_ITEM(l, s, PyBool_FromLong(g->uno[s]));
    return l;
}

static PyObject *discard_codes(Core *g) { return codes_list(g->discard, g->dlen); }

/* BOT_CONTRACT.md's observation: a fresh dict of its 17 keys in order (OBS_KEYS) with the values ``v``
 * (stolen; a NULL one is an error already set).
 *
 * Inserting 17 keys costs 17 hash-table probes, about half of an observation's instructions. On
 * CPython 3.11 and 3.12 the dict is instead a copy of OBS_TEMPLATE (the keys, values None: PyDict_Copy
 * clones its table with one memcpy) whose 17 value slots are then written in place, in the entries
 * array of the keys table (the layout of CPython's Include/internal/pycore_dict.h, mirrored below).
 * obs_init checks at import that a copy is laid out as mirrored (a combined unicode table holding
 * exactly OBS_KEYS in order, values None); otherwise, and on any other version, make_dict inserts. */
#define N_OBS_KEYS 17
static PyObject *OBS_KEYS[N_OBS_KEYS], *OBS_TEMPLATE;
static int OBS_IN_PLACE;

#if PY_VERSION_HEX >= 0x030B0000 && PY_VERSION_HEX < 0x030D0000
typedef struct {
    Py_ssize_t dk_refcnt;
    uint8_t dk_log2_size, dk_log2_index_bytes, dk_kind;
    uint32_t dk_version;
    Py_ssize_t dk_usable, dk_nentries;
    char dk_indices[];
} ObsKeys;
typedef struct { PyObject *key, *value; } ObsEntry;
#define OBS_UNICODE_KIND 1

/* the entries of dict ``d``'s keys table when it is laid out as a copy of OBS_TEMPLATE must be, else NULL */
static ObsEntry *obs_entries(PyObject *d) {
    PyDictObject *mp = (PyDictObject *)d;
    ObsKeys *k = (ObsKeys *)mp->ma_keys;
    if (mp->ma_values || mp->ma_used != N_OBS_KEYS || k->dk_kind != OBS_UNICODE_KIND || k->dk_nentries != N_OBS_KEYS)
        return NULL;
    return (ObsEntry *)(k->dk_indices + ((size_t)1 << k->dk_log2_index_bytes));
}
#endif

static int obs_init(void) {
    if (!(OBS_TEMPLATE = PyDict_New())) return -1;
    for (int i = 0; i < N_OBS_KEYS; i++)
        if (PyDict_SetItem(OBS_TEMPLATE, OBS_KEYS[i], Py_None) < 0) return -1;
#if PY_VERSION_HEX >= 0x030B0000 && PY_VERSION_HEX < 0x030D0000
    PyObject *d = PyDict_Copy(OBS_TEMPLATE);
    if (!d) return -1;
    ObsEntry *e = obs_entries(d);
    int ok = e != NULL && Py_REFCNT(d) == 1;
    for (int i = 0; ok && i < N_OBS_KEYS; i++) ok = e[i].key == OBS_KEYS[i] && e[i].value == Py_None;
    Py_DECREF(d);
    OBS_IN_PLACE = ok;
#endif
    return 0;
}

static PyObject *obs_dict(PyObject **v) {
    PyObject *d = NULL;
    int i = 0;
    while (i < N_OBS_KEYS && v[i]) i++;
    if (i < N_OBS_KEYS) {
        for (i = 0; i < N_OBS_KEYS; i++) Py_XDECREF(v[i]);
        return NULL;
    }
#if PY_VERSION_HEX >= 0x030B0000 && PY_VERSION_HEX < 0x030D0000
    if (OBS_IN_PLACE) {
        ObsEntry *e = (d = PyDict_Copy(OBS_TEMPLATE)) ? obs_entries(d) : NULL;
        if (e) {
            for (i = 0; i < N_OBS_KEYS; i++) {
                PyObject *old = e[i].value;
                e[i].value = v[i];  /* stolen */
                Py_DECREF(old);
            }
            /* the template holds no container, so its copy is not tracked by the cyclic GC: this one is */
            if (!PyObject_GC_IsTracked(d)) PyObject_GC_Track(d);
            return d;
        }
        Py_XDECREF(d);
    }
#endif
    d = NEW_DICT(N_OBS_KEYS);
    if (d) {
        for (i = 0; i < N_OBS_KEYS; i++) {
            if (PyDict_SetItem(d, OBS_KEYS[i], v[i]) < 0) { Py_CLEAR(d); break; }
        }
    }
    for (i = 0; i < N_OBS_KEYS; i++) Py_DECREF(v[i]);
    return d;
}

static PyObject *core_observation(Core *g, PyObject *unused) {
    if (check_ready(g) < 0) return NULL;
    if (g->over) {
        PyErr_SetString(PyExc_RuntimeError, "the game is over: no seat is asked");
        return NULL;
    }
    int s = g->seat, dec = g->decision;
    PyObject *v[N_OBS_KEYS] = {
        small_int(s), small_int(g->n), codes_list(g->hand[s], g->hlen[s]), Py_NewRef(CODE[DECK[g->discard[g->dlen - 1]]]),
        color_obj(g->color), PyLong_FromLong(g->direction), small_int(g->current), hand_sizes(g), uno_list(g),
        int_list(g->scores, g->n), small_int(g->pile_count), discard_codes(g),
        small_int(dec == D_STACK || dec == D_CHALLENGE ? g->pending : 0), PyLong_FromLong(g->round),
        small_int(g->dealer), Py_NewRef(DECISION_STR[dec]), legal_dicts(g)};
    return obs_dict(v);
}

/* ------------------------------------------------------------------ snapshots
 * Core.snapshot(): engine.snapshot.Snapshot's contract in C (a read-only Mapping of the
 * observation's 17 keys in order; tuples for sequences; legal_actions a tuple of shared
 * read-only views of the prebuilt action dicts; to_dict() the plain observation). The
 * decision's state is copied into the snapshot as bytes when it is made; each sequence
 * becomes a tuple on its first read and is kept. engine.compiled registers the type as
 * a virtual subclass of engine.snapshot.Snapshot. */
enum {
    K_SEAT, K_PLAYERS, K_HAND, K_TOP_CARD, K_COLOR, K_DIRECTION, K_CURRENT, K_HAND_SIZES, K_UNO, K_SCORES,
    K_DRAW_PILE, K_DISCARD, K_PENDING_DRAW, K_ROUND, K_DEALER, K_DECISION, K_LEGAL_ACTIONS, N_KEYS
};
/* the sequences a snapshot keeps once built */
enum { C_HAND, C_HAND_SIZES, C_UNO, C_SCORES, C_DISCARD, C_LEGAL, N_CACHED };
static PyObject *SNAP_KEYS;      /* tuple of the 17 keys, in order */
static PyObject *SNAP_INDEX;     /* key -> index */
static PyObject *ABC_MAPPING, *ABC_KEYS, *ABC_ITEMS, *ABC_VALUES;  /* collections.abc, imported on first use */

typedef struct {
    PyObject_HEAD
    PyObject *cache[N_CACHED];
    long long scores[MAX_SEATS];
    int32_t round;
    int8_t seat, n, color, direction, current, dealer, decision, legal_uno;
    uint8_t pile_count, pending, hlen, dlen, nlegal, top_kind;
    uint8_t hand_sizes[MAX_SEATS], uno[MAX_SEATS];
    uint8_t hand[DECK_SIZE], discard[DECK_SIZE], legal[NUM_ACTIONS];
} Snap;

static PyTypeObject SnapType;

static PyObject *core_snapshot(Core *g, PyObject *unused) {
    if (check_ready(g) < 0) return NULL;
    if (g->over) {
        PyErr_SetString(PyExc_RuntimeError, "the game is over: no seat is asked");
        return NULL;
    }
    compute_legal(g);
    Snap *p = PyObject_New(Snap, &SnapType);
    if (!p) return NULL;
    int s = g->seat, n = g->n, dec = g->decision;
    memset(p->cache, 0, sizeof p->cache);
    p->seat = (int8_t)s;
    p->n = (int8_t)n;
    p->color = (int8_t)g->color;
    p->direction = (int8_t)g->direction;
    p->current = (int8_t)g->current;
    p->dealer = (int8_t)g->dealer;
    p->decision = (int8_t)dec;
    p->round = g->round;
    p->pile_count = (uint8_t)g->pile_count;
    p->pending = (uint8_t)(dec == D_STACK || dec == D_CHALLENGE ? g->pending : 0);
    p->top_kind = DECK[g->discard[g->dlen - 1]];
    p->hlen = (uint8_t)g->hlen[s];
    memcpy(p->hand, g->hand[s], (size_t)g->hlen[s]);
    p->dlen = (uint8_t)g->dlen;
    memcpy(p->discard, g->discard, (size_t)g->dlen);
    p->nlegal = (uint8_t)g->nlegal;
    p->legal_uno = (int8_t)g->legal_uno;
    memcpy(p->legal, g->legal, (size_t)g->nlegal);
    for (int i = 0; i < n; i++) {
        p->hand_sizes[i] = (uint8_t)g->hlen[i];
        p->uno[i] = g->uno[i];
        p->scores[i] = g->scores[i];
    }
    return (PyObject *)p;
}

static void snap_dealloc(Snap *p) {
    for (int i = 0; i < N_CACHED; i++) Py_XDECREF(p->cache[i]);
    PyObject_Free(p);
}

static PyObject *codes_tuple(const uint8_t *ids, int len) {
    PyObject *t = PyTuple_New(len);
    if (!t) return NULL;
    for (int i = 0; i < len; i++) PyTuple_SET_ITEM(t, i, Py_NewRef(CODE[DECK[ids[i]]]));
    return t;
}

/* a sequence value, built on first read: a new reference */
static PyObject *snap_cached(Snap *p, int which) {
    PyObject *v = p->cache[which];
    if (v) return Py_NewRef(v);
    int n = p->n;
    switch (which) {
    case C_HAND: v = codes_tuple(p->hand, p->hlen); break;
    case C_DISCARD: v = codes_tuple(p->discard, p->dlen); break;
    case C_LEGAL:
        if ((v = PyTuple_New(p->nlegal)))
            for (int i = 0; i < p->nlegal; i++) PyTuple_SET_ITEM(v, i, Py_NewRef(VIEW[p->legal_uno][p->legal[i]]));
        break;
    case C_HAND_SIZES:
        if ((v = PyTuple_New(n))) for (int i = 0; i < n; i++) PyTuple_SET_ITEM(v, i, small_int(p->hand_sizes[i]));
        break;
    case C_UNO:
        if ((v = PyTuple_New(n))) for (int i = 0; i < n; i++) PyTuple_SET_ITEM(v, i, PyBool_FromLong(p->uno[i]));
        break;
    default:  /* C_SCORES */
        if ((v = PyTuple_New(n))) {
            for (int i = 0; i < n; i++) {
                PyObject *x = PyLong_FromLongLong(p->scores[i]);
                if (!x) { Py_CLEAR(v); break; }
                PyTuple_SET_ITEM(v, i, x);
            }
        }
    }
    if (!v) return NULL;
    p->cache[which] = v;
    return Py_NewRef(v);
}

/* the value of key number ``i``: a new reference */
static PyObject *snap_value(Snap *p, int i) {
    switch (i) {
    case K_SEAT: return small_int(p->seat);
    case K_PLAYERS: return small_int(p->n);
    case K_HAND: return snap_cached(p, C_HAND);
    case K_TOP_CARD: return Py_NewRef(CODE[p->top_kind]);
    case K_COLOR: return color_obj(p->color);
    case K_DIRECTION: return PyLong_FromLong(p->direction);
    case K_CURRENT: return small_int(p->current);
    case K_HAND_SIZES: return snap_cached(p, C_HAND_SIZES);
    case K_UNO: return snap_cached(p, C_UNO);
    case K_SCORES: return snap_cached(p, C_SCORES);
    case K_DRAW_PILE: return small_int(p->pile_count);
    case K_DISCARD: return snap_cached(p, C_DISCARD);
    case K_PENDING_DRAW: return small_int(p->pending);
    case K_ROUND: return PyLong_FromLong(p->round);
    case K_DEALER: return small_int(p->dealer);
    case K_DECISION: return Py_NewRef(DECISION_STR[p->decision]);
    default: return snap_cached(p, C_LEGAL);
    }
}

/* the index of ``key``, -1 when it is not a key (no error set), -2 on error */
static int snap_index(PyObject *key) {
    PyObject *i = PyDict_GetItemWithError(SNAP_INDEX, key);
    if (!i) return PyErr_Occurred() ? -2 : -1;
    return (int)PyLong_AsLong(i);
}

static PyObject *snap_subscript(Snap *p, PyObject *key) {
    int i = snap_index(key);
    if (i == -2) return NULL;
    if (i < 0) {
        PyErr_SetObject(PyExc_KeyError, key);
        return NULL;
    }
    return snap_value(p, i);
}

static Py_ssize_t snap_length(Snap *p) { return N_KEYS; }

static int snap_contains(Snap *p, PyObject *key) {
    int i = snap_index(key);
    return i == -2 ? -1 : i >= 0;
}

static PyObject *snap_iter(Snap *p) { return PyObject_GetIter(SNAP_KEYS); }

static PyObject *snap_get(Snap *p, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs < 1 || nargs > 2) {
        PyErr_SetString(PyExc_TypeError, "get(key, default=None)");
        return NULL;
    }
    int i = snap_index(args[0]);
    if (i == -2) return NULL;
    if (i < 0) return Py_NewRef(nargs == 2 ? args[1] : Py_None);
    return snap_value(p, i);
}

/* the plain observation dict of BOT_CONTRACT.md (Core.observation()'s content) */
static PyObject *snap_to_dict(Snap *p, PyObject *unused) {
    PyObject *legal = PyList_New(p->nlegal);
    if (!legal) return NULL;
    for (int i = 0; i < p->nlegal; i++) {
        PyObject *d = PyDict_Copy(TEMPLATE[p->legal_uno][p->legal[i]]);
        if (!d) { Py_DECREF(legal); return NULL; }
        PyList_SET_ITEM(legal, i, d);
    }
    int n = p->n;
    PyObject *sizes = PyList_New(n), *uno = PyList_New(n);
    long long scores[MAX_SEATS];
    if (sizes && uno) {
        for (int s = 0; s < n; s++) {
            PyList_SET_ITEM(sizes, s, small_int(p->hand_sizes[s]));
            PyList_SET_ITEM(uno, s, PyBool_FromLong(p->uno[s]));
            scores[s] = p->scores[s];
        }
    }
    PyObject *v[N_OBS_KEYS] = {
        small_int(p->seat), small_int(n), codes_list(p->hand, p->hlen), Py_NewRef(CODE[p->top_kind]),
        color_obj(p->color), PyLong_FromLong(p->direction), small_int(p->current), sizes, uno,
        sizes && uno ? int_list(scores, n) : NULL, small_int(p->pile_count), codes_list(p->discard, p->dlen),
        small_int(p->pending), PyLong_FromLong(p->round), small_int(p->dealer), Py_NewRef(DECISION_STR[p->decision]),
        legal};
    return obs_dict(v);
}

static int abc_ready(void) {
    if (ABC_MAPPING) return 0;
    PyObject *abc = PyImport_ImportModule("collections.abc");
    if (!abc) return -1;
    ABC_KEYS = PyObject_GetAttrString(abc, "KeysView");
    ABC_ITEMS = PyObject_GetAttrString(abc, "ItemsView");
    ABC_VALUES = PyObject_GetAttrString(abc, "ValuesView");
    ABC_MAPPING = PyObject_GetAttrString(abc, "Mapping");
    Py_DECREF(abc);
    if (!ABC_KEYS || !ABC_ITEMS || !ABC_VALUES || !ABC_MAPPING) {
        Py_CLEAR(ABC_KEYS); Py_CLEAR(ABC_ITEMS); Py_CLEAR(ABC_VALUES); Py_CLEAR(ABC_MAPPING);
        return -1;
    }
    return 0;
}

static PyObject *snap_view(PyObject *p, PyObject **which) {
    return abc_ready() < 0 ? NULL : PyObject_CallOneArg(*which, p);
}
static PyObject *snap_keys(PyObject *p, PyObject *unused) { return snap_view(p, &ABC_KEYS); }
static PyObject *snap_items(PyObject *p, PyObject *unused) { return snap_view(p, &ABC_ITEMS); }
static PyObject *snap_values(PyObject *p, PyObject *unused) { return snap_view(p, &ABC_VALUES); }

/* a plain dict of a mapping's items (a new reference) */
static PyObject *items_dict(PyObject *mapping) {
    PyObject *d = PyDict_New();
    if (d && PyDict_Merge(d, mapping, 1) < 0) Py_CLEAR(d);
    return d;
}

/* as collections.abc.Mapping.__eq__: equal items with any Mapping */
static PyObject *snap_richcompare(PyObject *p, PyObject *other, int op) {
    if ((op != Py_EQ && op != Py_NE) || abc_ready() < 0) {
        if (PyErr_Occurred()) return NULL;
        Py_RETURN_NOTIMPLEMENTED;
    }
    int is_mapping = PyObject_IsInstance(other, ABC_MAPPING);
    if (is_mapping < 0) return NULL;
    if (!is_mapping) Py_RETURN_NOTIMPLEMENTED;
    PyObject *mine = items_dict(p), *theirs = mine ? items_dict(other) : NULL;
    PyObject *r = theirs ? PyObject_RichCompare(mine, theirs, op) : NULL;
    Py_XDECREF(mine);
    Py_XDECREF(theirs);
    return r;
}

static PyObject *snap_self(PyObject *p, PyObject *unused) { return Py_NewRef(p); }

static PyObject *snap_reduce(PyObject *p, PyObject *unused) {
    PyErr_SetString(PyExc_TypeError, "a Snapshot is not pickled: pickle its to_dict()");
    return NULL;
}

static PyObject *snap_repr(Snap *p) {
    PyObject *d = snap_to_dict(p, NULL);
    if (!d) return NULL;
    PyObject *r = PyUnicode_FromFormat("Snapshot(%R)", d);
    Py_DECREF(d);
    return r;
}

static PyMappingMethods snap_as_mapping = {
    .mp_length = (lenfunc)snap_length,
    .mp_subscript = (binaryfunc)snap_subscript,
};

static PySequenceMethods snap_as_sequence = {
    .sq_contains = (objobjproc)snap_contains,
};

static PyMethodDef snap_methods[] = {
    {"get", (PyCFunction)(void (*)(void))snap_get, METH_FASTCALL, "the value of key, or default"},
    {"keys", snap_keys, METH_NOARGS, NULL},
    {"items", snap_items, METH_NOARGS, NULL},
    {"values", snap_values, METH_NOARGS, NULL},
    {"to_dict", (PyCFunction)snap_to_dict, METH_NOARGS,
     "the plain observation dict of BOT_CONTRACT.md: lists, fresh action dicts (JSON-ready)"},
    {"__copy__", snap_self, METH_NOARGS, "immutable: a copy is the same snapshot"},
    {"__deepcopy__", snap_self, METH_O, "immutable: a copy is the same snapshot"},
    {"__reduce__", snap_reduce, METH_NOARGS, "a Snapshot is not pickled: pickle its to_dict()"},
    {NULL}
};

static PyTypeObject SnapType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "engine._core.Snapshot",
    .tp_basicsize = sizeof(Snap),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_MAPPING,
    .tp_doc = "One decision's observation, read-only (engine.snapshot.Snapshot's contract; Core.snapshot()).",
    .tp_dealloc = (destructor)snap_dealloc,
    .tp_repr = (reprfunc)snap_repr,
    .tp_as_mapping = &snap_as_mapping,
    .tp_as_sequence = &snap_as_sequence,
    .tp_hash = PyObject_HashNotImplemented,
    .tp_richcompare = snap_richcompare,
    .tp_iter = (getiterfunc)snap_iter,
    .tp_methods = snap_methods,
};

/* The turn loop's observation, recycled. core_play_turns hands each plain seat a fresh
 * observation (core_observation's content: BOT_CONTRACT.md's 17 keys, new lists, new action
 * dicts) but builds it in the objects of the one it handed out before when nothing else can
 * see them any more. Once the reply was matched and carried out, the dict is reused if only
 * the loop refers to it (refcount 1) and its ma_version_tag is the one it had when handed out
 * (CPython gives a dict a new tag, never one it gave before, at every insertion, deletion,
 * replaced value or clear): it holds the 17 keys and the values written, so the values are
 * rewritten in place, as obs_dict writes a template's copy. Each of its lists only it refers
 * to is refilled (a list has no state but its items: items already right are left as they
 * are). Each action dict of the listing only that list refers to, with its tag unchanged, is
 * still a copy of TEMPLATE: it goes to the pool of its shape (its list of keys), and a later
 * listing takes a dict of the shape it needs from the pool, writing the values of the action
 * it stands for, before it copies TEMPLATE. Anything else (a dict, list or action dict a bot
 * kept or changed) is dropped, never written again, and built anew. CPython 3.11 and 3.12 only
 * (OBS_IN_PLACE; recycle_check tests the tags and the action dicts' layout at import);
 * elsewhere the loop builds each observation with core_observation. */
#define N_SHAPES 8  /* (7: draw..challenge; a play, wild or not, with "uno" or not; a swap; a colour) */
#define POOL_SIZE 64

typedef struct {
    PyObject *obs;                       /* the observation last handed out (a reference), or NULL */
    uint64_t tag;                        /* its ma_version_tag then */
    int nlegal, uno;                     /* its legal actions: ids, dicts (identity only), their tags */
    uint8_t ids[NUM_ACTIONS];
    PyObject *acts[NUM_ACTIONS];
    uint64_t tags[NUM_ACTIONS];
    int npool[N_SHAPES];                 /* copies of a TEMPLATE of each shape nobody else refers to */
    PyObject *pool[N_SHAPES][POOL_SIZE];
} Recycler;

static int OBS_RECYCLE;

#if PY_VERSION_HEX >= 0x030B0000 && PY_VERSION_HEX < 0x030D0000
static PyObject *CARD_CODE[DECK_SIZE];   /* CODE[DECK[card]] */
static int8_t SHAPE[2][NUM_ACTIONS];     /* TEMPLATE[uno][id]'s list of keys, a number */
static int8_t ACT_LEN[2][NUM_ACTIONS];   /* its length */

/* the entries of action dict ``d`` when laid out as a copy of a TEMPLATE of ``n`` keys, else NULL */
static ObsEntry *act_entries(PyObject *d, Py_ssize_t n) {
    PyDictObject *mp = (PyDictObject *)d;
    ObsKeys *k = (ObsKeys *)mp->ma_keys;
    if (mp->ma_values || mp->ma_used != n || k->dk_kind != OBS_UNICODE_KIND || k->dk_nentries != n) return NULL;
    return (ObsEntry *)(k->dk_indices + ((size_t)1 << k->dk_log2_index_bytes));
}

static inline uint64_t dict_tag(PyObject *d) {
    _Py_COMP_DIAG_PUSH
    _Py_COMP_DIAG_IGNORE_DEPR_DECLS
    return ((PyDictObject *)d)->ma_version_tag;
    _Py_COMP_DIAG_POP
}

/* 1 if recycling works as relied on: a copy of OBS_TEMPLATE gets a new tag at a replaced value, a
 * deletion and a clear; a copy of each TEMPLATE holds its keys and values in order in a combined
 * table (a pooled copy is rewritten in place). Sets the tables recycling reads. */
static int recycle_check(void) {
    for (int c = 0; c < DECK_SIZE; c++) CARD_CODE[c] = CODE[DECK[c]];
    PyObject *d = PyDict_Copy(OBS_TEMPLATE);
    if (!d) return -1;
    uint64_t t0 = dict_tag(d);
    int ok = PyDict_SetItem(d, OBS_KEYS[0], Py_False) == 0;
    uint64_t t1 = dict_tag(d);
    ok = ok && PyDict_DelItem(d, OBS_KEYS[0]) == 0;
    uint64_t t2 = dict_tag(d);
    PyDict_Clear(d);
    ok = ok && t1 != t0 && t2 != t1 && t2 != t0 && dict_tag(d) != t2 && dict_tag(d) != t0;
    Py_DECREF(d);
    if (PyErr_Occurred()) return -1;
    PyObject *first[N_SHAPES];  /* a TEMPLATE of each shape */
    int shapes = 0;
    for (int uno = 0; ok && uno < 2; uno++) {
        for (int id = 0; ok && id < NUM_ACTIONS; id++) {
            PyObject *t = TEMPLATE[uno][id], *c = PyDict_Copy(t);
            if (!c) return -1;
            Py_ssize_t n = PyDict_GET_SIZE(t);
            ObsEntry *te = act_entries(t, n), *e = act_entries(c, n);
            ok = te && e;
            for (Py_ssize_t j = 0; ok && j < n; j++) ok = e[j].key == te[j].key && e[j].value == te[j].value;
            Py_DECREF(c);
            int k = 0;
            while (ok && k < shapes) {
                Py_ssize_t m = PyDict_GET_SIZE(first[k]);
                ObsEntry *fe = act_entries(first[k], m);
                int same = m == n;
                for (Py_ssize_t j = 0; same && j < n; j++) same = fe[j].key == te[j].key;
                if (same) break;
                k++;
            }
            if (ok && k == shapes) {
                if (shapes == N_SHAPES) { ok = 0; break; }
                first[shapes++] = t;
            }
            SHAPE[uno][id] = (int8_t)k;
            ACT_LEN[uno][id] = (int8_t)n;
        }
    }
    return ok;
}

/* What a rebuild replaces is released only once the observation is whole (release_drops): a bot may have
 * put its own objects into a list it was handed (the list stays reusable), and freeing one runs its
 * finalizer, Python code that could reach a list being refilled (gc.get_objects) and clear or resize
 * it under the loop's pointers. Objects whose freeing runs no Python code are released at once. */
static PyObject *DROPS;

static void drop(PyObject *o) {
    if (Py_REFCNT(o) > 1 || PyUnicode_CheckExact(o) || PyLong_CheckExact(o) || o == Py_None) {
        Py_DECREF(o);
        return;
    }
    if (!DROPS) DROPS = PyList_New(0);
    if (DROPS && PyList_Append(DROPS, o) == 0) {
        Py_DECREF(o);
        return;
    }
    PyErr_Clear();  /* no memory for the list: the object is kept for good (a leak, not a crash) */
}

/* release what the rebuild dropped (their finalizers may run now), keeping any exception set */
static void release_drops(void) {
    if (!DROPS || PyList_GET_SIZE(DROPS) == 0) return;
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    PyObject *d = DROPS;
    DROPS = NULL;  /* a finalizer's own observation (a nested match) gets a list of its own */
    Py_DECREF(d);
    PyErr_Restore(type, value, tb);
}

/* list ``*slot`` made ready for ``n`` items (written with put_item, then end_items): itself when only
 * the observation refers to it and it has room, else a new one (``spare`` more places) in the slot */
static PyObject *slot_list(PyObject **slot, Py_ssize_t n, Py_ssize_t spare) {
    PyObject *l = *slot;
    if (Py_REFCNT(l) == 1 && PyList_CheckExact(l) && ((PyListObject *)l)->allocated >= n) return l;
    PyObject *fresh = PyList_New(n + spare);
    if (!fresh) return NULL;
    Py_SET_SIZE(fresh, 0);  /* its items are NULL: put_item writes them */
    *slot = fresh;
    drop(l);
    return fresh;
}

/* item ``i`` of list ``l`` is ``v`` (a new reference, stolen); past the list's end a place of its room */
static inline void put_item(PyObject *l, Py_ssize_t i, PyObject *v) {
    PyObject **p = ((PyListObject *)l)->ob_item + i;
    if (i < Py_SIZE(l)) {
        PyObject *old = *p;
        *p = v;
        drop(old);
    } else {
        *p = v;
    }
}

static inline void put_borrowed(PyObject *l, Py_ssize_t i, PyObject *v) {
    if (i < Py_SIZE(l) && ((PyListObject *)l)->ob_item[i] == v) return;
    put_item(l, i, Py_NewRef(v));
}

/* list ``l`` holds the ``n`` items written, the ones past them dropped (after the list ends short of them) */
static void end_items(PyObject *l, Py_ssize_t n) {
    Py_ssize_t old = Py_SIZE(l);
    Py_SET_SIZE(l, n);
    for (Py_ssize_t i = n; i < old; i++) drop(((PyListObject *)l)->ob_item[i]);
}

static int fill_codes(PyObject **slot, const uint8_t *ids, int len) {
    PyObject *l = slot_list(slot, len, 8);
    if (!l) return -1;
    PyObject **items = ((PyListObject *)l)->ob_item;
    int i = 0, same = (int)Py_MIN(len, Py_SIZE(l));
    for (; i < same; i++) {  /* the discard pile mostly grows at its end: most items are in place */
        PyObject *v = CARD_CODE[ids[i]], *old = items[i];
        if (old != v) {
            items[i] = Py_NewRef(v);
            drop(old);
        }
    }
    for (; i < len; i++) items[i] = Py_NewRef(CARD_CODE[ids[i]]);
    end_items(l, len);
    return 0;
}

/* a list of the game's ``n`` ints ``v`` (hand sizes, scores: of any size) */
static int fill_ints(PyObject **slot, int n, const long long *v) {
    PyObject *l = slot_list(slot, n, 0);
    if (!l) return -1;
    for (int s = 0; s < n; s++) {
        if (v[s] >= 0 && v[s] < 256) {
            put_borrowed(l, s, SMALL_INT[v[s]]);
        } else {
            PyObject *x = PyLong_FromLongLong(v[s]);
            if (!x) {
                if (s > Py_SIZE(l)) Py_SET_SIZE(l, s);
                return -1;
            }
            put_item(l, s, x);
        }
    }
    end_items(l, n);
    return 0;
}

static int fill_bools(PyObject **slot, int n, const uint8_t *v) {
    PyObject *l = slot_list(slot, n, 0);
    if (!l) return -1;
    for (int s = 0; s < n; s++) put_borrowed(l, s, v[s] ? Py_True : Py_False);
    end_items(l, n);
    return 0;
}

/* entry ``e`` of the observation holds ``v`` (borrowed) */
static inline void set_entry(ObsEntry *e, PyObject *v) {
    PyObject *old = e->value;
    if (old == v) return;
    e->value = Py_NewRef(v);
    drop(old);
}

static inline int set_int(ObsEntry *e, long v) {
    if (v >= 0 && v < 256) {
        set_entry(e, SMALL_INT[v]);
        return 0;
    }
    PyObject *x = PyLong_FromLong(v), *old = e->value;
    if (!x) return -1;
    e->value = x;
    drop(old);
    return 0;
}

/* the listing of the legal actions: the pool's dicts where it has them, else copies of TEMPLATE */
static int fill_legal(Core *g, Recycler *r, PyObject **slot) {
    PyObject *l = *slot;
    if (Py_REFCNT(l) == 1 && PyList_CheckExact(l)) {
        /* the dicts handed out last that nobody kept or changed go to the pool (the list keeps them
         * until overwritten: it stays whole while dicts it drops are freed) */
        PyObject **items = ((PyListObject *)l)->ob_item;
        Py_ssize_t len = Py_SIZE(l);
        for (Py_ssize_t i = 0; i < len && i < r->nlegal; i++) {
            PyObject *a = items[i];
            int shape = SHAPE[r->uno][r->ids[i]];
            if (a == r->acts[i] && r->npool[shape] < POOL_SIZE && Py_REFCNT(a) == 1 && dict_tag(a) == r->tags[i])
                r->pool[shape][r->npool[shape]++] = Py_NewRef(a);
        }
    }
    r->nlegal = 0;
    compute_legal(g);
    int n = g->nlegal, uno = g->legal_uno;
    if (!(l = slot_list(slot, n, 8))) return -1;
    for (int i = 0; i < n; i++) {
        int id = g->legal[i];
        int shape = SHAPE[uno][id], n_keys = ACT_LEN[uno][id];
        PyObject *a = NULL;
        if (r->npool[shape]) {
            /* a copy of a TEMPLATE of these keys, unchanged: given the values of this one */
            a = r->pool[shape][--r->npool[shape]];
            ObsEntry *e = act_entries(a, n_keys), *te = act_entries(TEMPLATE[uno][id], n_keys);
            for (int j = 0; e && j < n_keys; j++) {
                PyObject *old = e[j].value;
                if (old != te[j].value) {
                    e[j].value = Py_NewRef(te[j].value);
                    drop(old);
                }
            }
            if (!e) Py_CLEAR(a);
        }
        if (!a && !(a = PyDict_Copy(TEMPLATE[uno][id]))) {
            if (i > Py_SIZE(l)) Py_SET_SIZE(l, i);
            return -1;
        }
        put_item(l, i, a);
        r->ids[i] = (uint8_t)id;
        r->acts[i] = a;
        r->tags[i] = dict_tag(a);
    }
    end_items(l, n);
    r->nlegal = n;
    r->uno = uno;
    return 0;
}

static void recycler_clear(Recycler *r) {
    Py_CLEAR(r->obs);
    for (int k = 0; k < N_SHAPES; k++)
        while (r->npool[k]) Py_DECREF(r->pool[k][--r->npool[k]]);
}

/* The legal action id of a reply that is one of the action dicts of the listing handed out last,
 * unchanged (the same object, its tag the one it was handed out with), else -1: such a dict is
 * still a copy of TEMPLATE[r->uno][id], keys and values, so match_action would parse it as ``id``
 * (its "uno" True exactly when the listing's uno and id is a play); the check that ``id`` is still
 * legal is match_action's. What a seat returns is nearly always one of these: the turn loop skips
 * match_action's dict reads and string compares (about 800 instructions a decision). */
static int recycled_action(Core *g, const Recycler *r, PyObject *action) {
    if (!PyDict_CheckExact(action)) return -1;
    for (int i = 0; i < r->nlegal; i++) {
        if (r->acts[i] != action) continue;
        if (dict_tag(action) != r->tags[i]) return -1;
        return legal_index(g, r->ids[i]) >= 0 ? r->ids[i] : -1;
    }
    return -1;
}

/* A seat's attribute as getattr finds it, kept while nothing it comes from changed: the turn loop
 * reads two attributes of a seat at every decision (an AgentSeat's ``agent``, any seat's
 * ``last_decision_seconds``), about 250 instructions each through getattr. For a seat whose class
 * has the plain getattr (PyObject_GenericGetAttr) and no descriptor of that name, the value is the
 * instance dict's entry, else the class's: it is the same object while the seat has the same class
 * with the same type version tag (CPython gives a class a new tag when it or a base is changed) and
 * the same instance dict with the same ma_version_tag (a new one at every change: recycle_check).
 * Only a value found is kept; anything else is looked up every time. Nothing is held: the memo's
 * pointers are compared, never followed unless the seat's own dict is the one kept (then alive),
 * and the value is alive while the dict or class it came from is unchanged, so an object is freed
 * when it would be without the memo (an agent the seat dropped, a seat the bots' list dropped). */
/* the instance dict of an object whose class has Py_TPFLAGS_MANAGED_DICT, once made (PyObject_GenericGetDict
 * makes it): CPython 3.11 and 3.12 keep it three pointers before the object (_PyObject_ManagedDictPointer,
 * _PyObject_DictOrValuesPointer); before it is made that place holds NULL (3.11) or tagged values (3.12) */
#define MANAGED_DICT(o) (((PyObject **)(o))[-3])

typedef struct {
    PyObject *seat, *dict, *value;  /* borrowed (see above); value NULL when nothing is kept */
    PyTypeObject *type;
    unsigned int type_tag;
    uint64_t dict_tag;
} AttrMemo;

/* whether ``m`` holds ``seat``'s value: nothing it came from changed since it was read */
static inline int memo_hit(const AttrMemo *m, PyObject *seat) {
    PyTypeObject *tp = Py_TYPE(seat);
    return m->value && m->seat == seat && m->type == tp && tp->tp_version_tag == m->type_tag
        && PyType_HasFeature(tp, Py_TPFLAGS_VALID_VERSION_TAG) && MANAGED_DICT(seat) == m->dict
        && dict_tag(m->dict) == m->dict_tag;
}

/* LOOKUP_ATTR(seat, name, out) through ``m`` (what it returns, and *out a new reference or NULL);
 * ``required``: PyObject_GetAttr's instead (an attribute missing raises, -1) */
static int memo_attr(AttrMemo *m, PyObject *seat, PyObject *name, PyObject **out, int required) {
    PyTypeObject *tp = Py_TYPE(seat);
    if (memo_hit(m, seat)) {
        *out = Py_NewRef(m->value);
        return 1;
    }
    m->value = NULL;
    /* the seat's dict (once made) and the class's tag taken BEFORE the lookup and checked unchanged
     * after it: getattr may run Python code (a dict key's __eq__, a finalizer) that replaces the entry
     * after the value was read, and a memo kept then would hold a value nothing else holds */
    unsigned int type_tag = tp->tp_version_tag;
    PyObject *before = NULL;
    uint64_t tag = 0;
    if (OBS_RECYCLE && (tp->tp_flags & Py_TPFLAGS_MANAGED_DICT) && PyType_HasFeature(tp, Py_TPFLAGS_VALID_VERSION_TAG)) {
        before = MANAGED_DICT(seat);  /* NULL (3.11) or tagged values (3.12) before the dict is made */
        if (before && !((uintptr_t)before & 1) && PyDict_CheckExact(before)) tag = dict_tag(before);
        else before = NULL;
    }
    int found;
    if (required) found = (*out = PyObject_GetAttr(seat, name)) ? 1 : -1;
    else found = LOOKUP_ATTR(seat, name, out);
    if (found <= 0 || !OBS_RECYCLE || tp->tp_getattro != PyObject_GenericGetAttr
        || !(tp->tp_flags & Py_TPFLAGS_MANAGED_DICT))  /* (OBS_RECYCLE: the tags work as relied on) */
        return found;
    PyObject *descr = _PyType_Lookup(tp, name);  /* borrowed; the lookup gives the class a valid tag */
    if ((descr && Py_TYPE(descr)->tp_descr_get) || !PyType_HasFeature(tp, Py_TPFLAGS_VALID_VERSION_TAG))
        return found;
    if (!before) {  /* the dict made now (the seat keeps it): kept from the next read on */
        PyObject *dict = PyObject_GenericGetDict(seat, NULL);
        if (!dict) PyErr_Clear();
        Py_XDECREF(dict);
        return found;
    }
    if (Py_TYPE(seat) == tp && tp->tp_version_tag == type_tag && MANAGED_DICT(seat) == before
        && dict_tag(before) == tag) {  /* nothing changed while getattr ran */
        m->seat = seat;
        m->type = tp;
        m->type_tag = type_tag;
        m->dict = before;
        m->dict_tag = tag;
        m->value = *out;
    }
    return found;
}
#else
static int recycle_check(void) { return 0; }
static void recycler_clear(Recycler *r) {}
static int recycled_action(Core *g, const Recycler *r, PyObject *action) { return -1; }
typedef struct { int unused; } AttrMemo;
static inline int memo_hit(const AttrMemo *m, PyObject *seat) { return 0; }
static int memo_attr(AttrMemo *m, PyObject *seat, PyObject *name, PyObject **out, int required) {
    if (required) return (*out = PyObject_GetAttr(seat, name)) ? 1 : -1;
    return LOOKUP_ATTR(seat, name, out);
}
#endif

/* core_observation's observation for the seat asked now, in the objects of ``r->obs`` where they can be reused */
static Py_NO_INLINE PyObject *recycled_observation(Core *g, Recycler *r) {
#if PY_VERSION_HEX >= 0x030B0000 && PY_VERSION_HEX < 0x030D0000
    if (OBS_RECYCLE) {
        PyObject *d = r->obs;
        r->obs = NULL;
        ObsEntry *e = d && Py_REFCNT(d) == 1 && dict_tag(d) == r->tag ? obs_entries(d) : NULL;
        if (!e) {
            Py_XDECREF(d);
            if (!(d = PyDict_Copy(OBS_TEMPLATE))) return NULL;
            if (!(e = obs_entries(d))) {
                Py_DECREF(d);
                r->nlegal = 0;  /* no listing of the recycler's handed out (recycled_action) */
                return core_observation(g, NULL);
            }
            if (!PyObject_GC_IsTracked(d)) PyObject_GC_Track(d);
        }
        int s = g->seat, dec = g->decision, n = g->n;
        long long sizes[MAX_SEATS];
        for (int t = 0; t < n; t++) sizes[t] = g->hlen[t];
        set_entry(&e[K_SEAT], SMALL_INT[s]);
        set_entry(&e[K_PLAYERS], SMALL_INT[n]);
        set_entry(&e[K_TOP_CARD], CARD_CODE[g->discard[g->dlen - 1]]);
        set_entry(&e[K_COLOR], g->color < 0 ? Py_None : COLOR_STR[g->color]);
        set_entry(&e[K_CURRENT], SMALL_INT[g->current]);
        set_entry(&e[K_DECISION], DECISION_STR[dec]);
        if (set_int(&e[K_DIRECTION], g->direction) < 0 || set_int(&e[K_DRAW_PILE], g->pile_count) < 0
            || set_int(&e[K_PENDING_DRAW], dec == D_STACK || dec == D_CHALLENGE ? g->pending : 0) < 0
            || set_int(&e[K_ROUND], g->round) < 0 || set_int(&e[K_DEALER], g->dealer) < 0
            || fill_codes(&e[K_HAND].value, g->hand[s], g->hlen[s]) < 0 || fill_ints(&e[K_HAND_SIZES].value, n, sizes) < 0
            || fill_bools(&e[K_UNO].value, n, g->uno) < 0 || fill_ints(&e[K_SCORES].value, n, g->scores) < 0
            || fill_codes(&e[K_DISCARD].value, g->discard, g->dlen) < 0 || fill_legal(g, r, &e[K_LEGAL_ACTIONS].value) < 0) {
            Py_DECREF(d);
            release_drops();
            return NULL;
        }
        r->obs = Py_NewRef(d);
        r->tag = dict_tag(d);
        release_drops();  /* finalizers run now may change the observation: then its tag tells */
        return d;
    }
#endif
    return core_observation(g, NULL);
}


static PyObject *core_apply(Core *g, PyObject *action) {
    if (check_ready(g) < 0) return NULL;
    if (g->over) return illegal(g, "over", action);
    int uno;
    int id = match_action(g, action, &uno);
    if (id == -2) return NULL;
    if (id < 0) return illegal(g, "action", action);
    if (commit(g, id, id_is_play(id) && uno) < 0) return NULL;
    Py_RETURN_NONE;
}

static PyObject *core_step(Core *g, PyObject *arg) {
    if (check_ready(g) < 0) return NULL;
    if (g->over) return illegal(g, "over_id", arg);
    if (!PyLong_CheckExact(arg)) return illegal(g, "not_id", arg);
    int overflow = 0;
    long id = PyLong_AsLongAndOverflow(arg, &overflow);
    if (overflow || id < 0 || id >= NUM_ACTIONS) return illegal(g, "not_id", arg);
    if (legal_index(g, (int)id) < 0) return illegal(g, "id", arg);
    if (commit(g, (int)id, g->legal_uno && id_is_play((int)id)) < 0) return NULL;
    Py_RETURN_NONE;
}

/* Game.play_ids(policy): ``step(policy(legal_action_ids()))`` until the game is over, the loop in C;
 * the decisions played. A policy's exception or an illegal id (core_step's IllegalAction) goes through. */
static PyObject *core_play_ids(Core *g, PyObject *policy) {
    if (check_ready(g) < 0) return NULL;
    long long n = 0;
    while (!g->over) {
        PyObject *ids = core_legal_action_ids(g, NULL);
        if (!ids) return NULL;
        PyObject *id = PyObject_Vectorcall(policy, &ids, 1, NULL);
        Py_DECREF(ids);
        if (!id) return NULL;
        PyObject *r = core_step(g, id);
        Py_DECREF(id);
        if (!r) return NULL;
        Py_DECREF(r);
        n++;
    }
    return PyLong_FromLongLong(n);
}

static PyObject *core_apply_fallback(Core *g, PyObject *unused) {
    if (check_ready(g) < 0) return NULL;
    if (g->over) return illegal(g, "over", Py_None);
    compute_legal(g);
    int id = g->legal[0];
    int uno = g->legal_uno && id_is_play(id);
    PyObject *d = PyDict_Copy(TEMPLATE[uno][id]);
    if (!d) return NULL;
    if (commit(g, id, uno) < 0) { Py_DECREF(d); return NULL; }
    return d;
}

static PyObject *core_fault(Core *g, PyObject *args, PyObject *kwds) {
    static char *kwlist[] = {"kind", "reason", "strikes", "forfeit", NULL};
    PyObject *kind, *reason, *strikes = Py_None, *forfeit = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "OO|$OO", kwlist, &kind, &reason, &strikes, &forfeit)) return NULL;
    if (check_ready(g) < 0) return NULL;
    if (g->over) {
        PyErr_SetString(PyExc_RuntimeError, "the game is over: no seat is asked");
        return NULL;
    }
    int s = g->seat;
    Py_ssize_t at = g->ev_count;
    PyObject *fault = make_dict(4, S_kind, Py_NewRef(kind), S_reason, Py_NewRef(reason), S_strikes, Py_NewRef(strikes),
                                S_forfeit, Py_NewRef(forfeit));
    PyObject *record = make_dict(4, S_since, PyLong_FromSsize_t(at - g->asked_at), S_seat, small_int(s),
                                 S_decision, Py_NewRef(DECISION_STR[g->decision]), S_fault, fault);
    if (!record) return NULL;
    Py_ssize_t i = PyList_GET_SIZE(g->aobjs);
    int r = PyList_Append(g->aobjs, record);
    Py_DECREF(record);
    if (r < 0 || ac_push(g, -1, (int32_t)i, 0, 0, 0) < 0) return NULL;
    g->asked_at = at;
    PyObject *event = make_dict(4, S_e, Py_NewRef(S_fault), S_seat, small_int(s), S_kind, Py_NewRef(kind),
                                S_reason, Py_NewRef(reason));
    if (event && strikes != Py_None && PyDict_SetItem(event, S_strikes, strikes) < 0) Py_CLEAR(event);
    if (emit_obj(g, event) < 0) return NULL;
    if (forfeit != Py_None &&
        emit_obj(g, make_dict(3, S_e, Py_NewRef(S_forfeit), S_seat, small_int(s), S_reason, Py_NewRef(forfeit))) < 0)
        return NULL;
    if (strikes != Py_None) {
        if (draw(g, s, STRIKE_DRAW, R_STRIKE, 0) == -2) return NULL;
        /* the decision resolved as a seat that lost its turn */
        int rc = 0;
        switch (g->decision) {
        case D_PLAY: case D_PLAY_DRAWN: rc = start_turn(g, mod(s + g->direction, g->n)); break;
        case D_CHOOSE_COLOR: rc = do_act(g, A_COLOR0, 0, 1); break;
        case D_CHALLENGE: case D_STACK: rc = do_act(g, A_ACCEPT, 0, 0); break;
        case D_JUMP_IN: rc = do_act(g, A_PASS, 0, 0); break;
        case D_SWAP_TARGET:
            rc = draw_owed_uno(g);
            if (rc == 0) rc = after_effect(g, g->res_player, g->res_kind);
            break;
        }
        if (rc < 0) return NULL;
    }
    Py_RETURN_NONE;
}

static PyObject *core_ranks(Core *g, PyObject *unused) {
    if (check_ready(g) < 0) return NULL;
    long ranks[MAX_SEATS];
    compute_ranks(g, ranks);
    long long r64[MAX_SEATS];
    for (int s = 0; s < g->n; s++) r64[s] = ranks[s];
    return int_list(r64, g->n);
}

/* ``agent(observation, configuration)`` with args = {slot, observation, configuration} (slot writable).
 * An instance of a class whose ``__call__`` is a Python function is called as CPython's slot_tp_call
 * calls it, ``type(agent).__call__(agent, ...)``, without building an argument tuple. */
static PyObject *call_agent(PyObject *agent, PyObject **args) {
    if (!PyFunction_Check(agent) && !Py_TYPE(agent)->tp_vectorcall_offset) {
        PyObject *call = _PyType_Lookup(Py_TYPE(agent), S___call__);  /* borrowed */
        if (call && PyFunction_Check(call)) {
            Py_INCREF(call);
            PyObject *slot = args[0];
            args[0] = agent;
            PyObject *r = PyObject_Vectorcall(call, args, 3, NULL);
            args[0] = slot;
            Py_DECREF(call);
            return r;
        }
    }
    return PyObject_Vectorcall(agent, args + 1, 2 | PY_VECTORCALL_ARGUMENTS_OFFSET, NULL);
}

/* The referee's turn loop for in-process seats (engine.match._play_turns), only the
 * seat's ``decide`` (and the rare paths: faults, timed seats, the live hook) in Python.
 * ``charge(b, fault, action)`` books a fault (action: the refused reply, fault None) and
 * records it in the game; ``timed(b, seconds)`` books a seat's reported time and gives
 * the ``times`` entry. Returns the decision count. */
static PyObject *turn_loop(Core *g, PyObject *seats, PyObject *lazy, PyObject *seat_bot, PyObject *configs,
                           PyObject *forfeits, PyObject *times, PyObject *on_step, PyObject *step_game,
                           long long decisions, PyObject *charge, PyObject *timed, PyObject *seat_fault,
                           PyObject *agent_fault, PyObject *collect, long long gc_every);

static PyObject *core_play_turns(Core *g, PyObject *args) {
    PyObject *seats, *lazy, *seat_bot, *configs, *forfeits, *times, *on_step, *step_game, *charge, *timed,
        *seat_fault, *agent_fault, *collect;
    long long decisions, gc_every;
    if (!PyArg_ParseTuple(args, "O!O!O!O!O!O!OOLOOOOOL", &PyList_Type, &seats, &PyList_Type, &lazy, &PyList_Type,
                          &seat_bot, &PyList_Type, &configs, &PyList_Type, &forfeits, &PyList_Type, &times, &on_step,
                          &step_game, &decisions, &charge, &timed, &seat_fault, &agent_fault, &collect, &gc_every))
        return NULL;
    return turn_loop(g, seats, lazy, seat_bot, configs, forfeits, times, on_step, step_game, decisions, charge, timed,
                     seat_fault, agent_fault, collect, gc_every);
}

static int plain_agent(PyObject *seat);
static PyObject *M_AGENT_DECIDE, *M_DECIDE_CODE;  /* (set_match) */

/* whether AgentSeat.decide (the function set_match was given) still runs the code it was given with */
static inline int decide_code_kept(void) {
    return M_DECIDE_CODE && PyFunction_GET_CODE(M_AGENT_DECIDE) == M_DECIDE_CODE;
}

/* core_play_turns's loop, its arguments parsed: lists where it asks for them (play_games calls it too) */
static PyObject *turn_loop(Core *g, PyObject *seats, PyObject *lazy, PyObject *seat_bot, PyObject *configs,
                           PyObject *forfeits, PyObject *times, PyObject *on_step, PyObject *step_game,
                           long long decisions, PyObject *charge, PyObject *timed, PyObject *seat_fault,
                           PyObject *agent_fault, PyObject *collect, long long gc_every) {
    if (check_ready(g) < 0) return NULL;
    if (PyList_GET_SIZE(seat_bot) != g->n) {
        PyErr_SetString(PyExc_ValueError, "seat_bot must have one bot per seat");
        return NULL;
    }
    PyObject *result = NULL;
    Recycler rc;  /* (its arrays are written before they are read) */
    rc.obs = NULL;
    rc.nlegal = rc.uno = 0;
    memset(rc.npool, 0, sizeof rc.npool);
    /* per bot, its seat's ``agent`` and ``last_decision_seconds`` as last read (memo_attr) */
    AttrMemo agents[MAX_SEATS], seconds_read[MAX_SEATS];
    memset(agents, 0, sizeof agents);
    memset(seconds_read, 0, sizeof seconds_read);
    while (!g->over) {
        long b = PyLong_AsLong(PyList_GET_ITEM(seat_bot, g->seat));
        if (b == -1 && PyErr_Occurred()) goto done;
        if (b < 0 || b >= PyList_GET_SIZE(seats) || b >= PyList_GET_SIZE(forfeits) || b >= PyList_GET_SIZE(configs)
            || b >= PyList_GET_SIZE(lazy)) {
            PyErr_SetString(PyExc_IndexError, "a bot index out of range");
            goto done;
        }
        if (PyList_GET_ITEM(forfeits, b) != Py_None) {
            compute_legal(g);
            int id = g->legal[0];
            if (commit(g, id, g->legal_uno && id_is_play(id)) < 0 || PyList_Append(times, Py_None) < 0) goto done;
            continue;
        }
        decisions++;
        if (decisions % gc_every == 0) {
            PyObject *r = PyObject_CallOneArg(collect, SMALL_INT[0]);
            if (!r) goto done;
            Py_DECREF(r);
        }
        /* a snapshot for a seat that opts in to them, else a fresh plain dict */
        PyObject *observation =
            PyList_GET_ITEM(lazy, b) == Py_True ? core_snapshot(g, NULL) : recycled_observation(g, &rc);
        if (!observation) goto done;
        if (on_step != Py_None) {
            PyObject *ev = materialize_events(g), *ac = ev ? materialize_actions(g) : NULL;
            PyObject *r = ac ? PyObject_CallFunctionObjArgs(on_step, step_game, ev, ac, NULL) : NULL;
            if (!r) { Py_DECREF(observation); goto done; }
            Py_DECREF(r);
        }
        /* strong references: a seat may change the lists it was not given while it decides */
        PyObject *seat = Py_NewRef(PyList_GET_ITEM(seats, b)), *config = Py_NewRef(PyList_GET_ITEM(configs, b));
        PyObject *decide_args[3] = {seat, observation, config};
        PyObject *action, *fault = NULL;
        /* an AgentSeat as it is (plain_agent), checked again whenever the seat, its dict or its class changed
         * since its agent was read (the agent's memo, kept only for a plain seat, misses) or decide's code
         * changed: a decide of its own, or its class's changed, is what the pure referee calls from then on */
        int plain = b < MAX_SEATS && memo_hit(&agents[b], seat) && decide_code_kept();
        if (!plain && (plain = plain_agent(seat)) < 0) {
            Py_DECREF(observation); Py_DECREF(config); Py_DECREF(seat);
            goto done;
        }
        if (plain) {
            /* an engine.match.AgentSeat as it is: its agent called here, what its decide does, without its frame */
            PyObject *agent;
            if (b < MAX_SEATS) memo_attr(&agents[b], seat, S_agent, &agent, 1);
            else agent = PyObject_GetAttr(seat, S_agent);
            action = agent ? call_agent(agent, decide_args) : NULL;
            Py_XDECREF(agent);
            /* AgentSeat.decide reads self.agent inside its try: a seat without one is the bot's fault too */
            if (!action && (PyErr_ExceptionMatches(PyExc_Exception) || PyErr_ExceptionMatches(PyExc_SystemExit))) {
                PyObject *type, *exc, *tb;
                PyErr_Fetch(&type, &exc, &tb);
                PyErr_NormalizeException(&type, &exc, &tb);
                if (exc && tb) PyException_SetTraceback(exc, tb);
                Py_XDECREF(type);
                Py_XDECREF(tb);
                fault = exc ? PyObject_CallOneArg(agent_fault, exc) : NULL;
                Py_XDECREF(exc);
                if (!fault) { Py_DECREF(observation); Py_DECREF(config); Py_DECREF(seat); goto done; }
            }
        } else {
            action = PyObject_VectorcallMethod(S_decide, decide_args, 3 | PY_VECTORCALL_ARGUMENTS_OFFSET, NULL);
        }
        Py_DECREF(observation);
        Py_DECREF(config);
        if (!action && !fault) {
            if (!PyErr_ExceptionMatches(seat_fault)) { Py_DECREF(seat); goto done; }
            PyObject *type, *tb;
            PyErr_Fetch(&type, &fault, &tb);
            PyErr_NormalizeException(&type, &fault, &tb);
            Py_XDECREF(type);
            Py_XDECREF(tb);
            if (!fault) { Py_DECREF(seat); goto done; }
        }
        PyObject *seconds;
        int looked = b < MAX_SEATS ? memo_attr(&seconds_read[b], seat, S_last_decision_seconds, &seconds, 0)
                                   : LOOKUP_ATTR(seat, S_last_decision_seconds, &seconds);
        Py_DECREF(seat);
        if (looked < 0) { Py_XDECREF(action); Py_XDECREF(fault); goto done; }
        int appended;
        if (seconds == NULL || seconds == Py_None) {
            appended = PyList_Append(times, Py_None);
        } else {
            PyObject *entry = PyObject_CallFunction(timed, "lO", b, seconds);
            appended = entry ? PyList_Append(times, entry) : -1;
            Py_XDECREF(entry);
        }
        Py_XDECREF(seconds);
        if (appended < 0) { Py_XDECREF(action); Py_XDECREF(fault); goto done; }
        if (!fault) {
            /* one of the listed dicts as handed out (recycled_action), else the reply parsed */
            int uno = rc.uno;
            int id = recycled_action(g, &rc, action);
            if (id < 0) id = match_action(g, action, &uno);
            if (id == -2) { Py_DECREF(action); goto done; }
            if (id >= 0) {
                Py_DECREF(action);
                if (commit(g, id, id_is_play(id) && uno) < 0) goto done;
                continue;
            }
            PyObject *r = PyObject_CallFunction(charge, "lOO", b, Py_None, action);
            Py_DECREF(action);
            if (!r) goto done;
            Py_DECREF(r);
        } else {
            PyObject *r = PyObject_CallFunction(charge, "lOO", b, fault, Py_None);
            Py_DECREF(fault);
            if (!r) goto done;
            Py_DECREF(r);
        }
    }
    result = PyLong_FromLongLong(decisions);
done:
    recycler_clear(&rc);
    return result;
}

/* every card id of each hand, in order */
static PyObject *get_hands(Core *g, void *c) {
    PyObject *l = PyList_New(g->n);
    if (!l) return NULL;
    for (int s = 0; s < g->n; s++) {
        PyObject *h = PyList_New(g->hlen[s]);
        if (!h) { Py_DECREF(l); return NULL; }
        for (int i = 0; i < g->hlen[s]; i++) PyList_SET_ITEM(h, i, small_int(g->hand[s][i]));
        PyList_SET_ITEM(l, s, h);
    }
    return l;
}

static PyObject *get_hand_codes(Core *g, void *c) {
    PyObject *l = PyList_New(g->n);
    if (!l) return NULL;
    for (int s = 0; s < g->n; s++) {
        PyObject *h = codes_list(g->hand[s], g->hlen[s]);
        if (!h) { Py_DECREF(l); return NULL; }
        PyList_SET_ITEM(l, s, h);
    }
    return l;
}

static PyObject *get_discard(Core *g, void *c) {
    PyObject *l = PyList_New(g->dlen);
    if (!l) return NULL;
    for (int i = 0; i < g->dlen; i++) PyList_SET_ITEM(l, i, small_int(g->discard[i]));
    return l;
}

static PyObject *get_events(Core *g, void *c) {
    if (check_ready(g) < 0) return NULL;
    PyObject *l = materialize_events(g);
    return l ? Py_NewRef(l) : NULL;
}

static PyObject *get_actions(Core *g, void *c) {
    if (check_ready(g) < 0) return NULL;
    PyObject *l = materialize_actions(g);
    return l ? Py_NewRef(l) : NULL;
}

static PyObject *get_event_count(Core *g, void *c) { return PyLong_FromSsize_t(g->ev_count); }
static PyObject *get_rules(Core *g, void *c) { return Py_NewRef(g->rules ? g->rules : Py_None); }
static PyObject *get_seed(Core *g, void *c) { return Py_NewRef(g->seed ? g->seed : Py_None); }
static PyObject *get_n(Core *g, void *c) { return PyLong_FromLong(g->n); }
static PyObject *get_scores(Core *g, void *c) { return int_list(g->scores, g->n); }
static PyObject *get_round(Core *g, void *c) { return PyLong_FromLong(g->round); }
static PyObject *get_dealer(Core *g, void *c) { return PyLong_FromLong(g->dealer); }
static PyObject *get_over(Core *g, void *c) { return PyBool_FromLong(g->over); }
static PyObject *get_decision(Core *g, void *c) {
    return Py_NewRef(g->decision < 0 ? Py_None : DECISION_STR[g->decision]);
}
static PyObject *get_seat(Core *g, void *c) { return g->seat < 0 ? Py_NewRef(Py_None) : PyLong_FromLong(g->seat); }
static PyObject *get_current(Core *g, void *c) { return PyLong_FromLong(g->current); }
static PyObject *get_direction(Core *g, void *c) { return PyLong_FromLong(g->direction); }
static PyObject *get_color(Core *g, void *c) { return PyLong_FromLong(g->color); }
static PyObject *get_pending(Core *g, void *c) { return PyLong_FromLong(g->pending); }
static PyObject *get_turns(Core *g, void *c) { return PyLong_FromLong(g->turns); }
static PyObject *get_pile_count(Core *g, void *c) { return PyLong_FromLong(g->pile_count); }
static PyObject *get_uno(Core *g, void *c) { return uno_list(g); }
static PyObject *get_discard_codes(Core *g, void *c) { return discard_codes(g); }

static PyGetSetDef core_getset[] = {
    {"rules", (getter)get_rules, NULL, "the rule set", NULL},
    {"seed", (getter)get_seed, NULL, "the game seed", NULL},
    {"n", (getter)get_n, NULL, "seats", NULL},
    {"scores", (getter)get_scores, NULL, "game score per seat (a fresh list)", NULL},
    {"events", (getter)get_events, NULL, "every event so far (one list, grows as it is read)", NULL},
    {"actions", (getter)get_actions, NULL, "every action record so far (one list, grows as it is read)", NULL},
    {"event_count", (getter)get_event_count, NULL, "len(events) without building them", NULL},
    {"round", (getter)get_round, NULL, NULL, NULL},
    {"dealer", (getter)get_dealer, NULL, NULL, NULL},
    {"over", (getter)get_over, NULL, NULL, NULL},
    {"decision", (getter)get_decision, NULL, NULL, NULL},
    {"seat", (getter)get_seat, NULL, NULL, NULL},
    {"current", (getter)get_current, NULL, NULL, NULL},
    {"direction", (getter)get_direction, NULL, NULL, NULL},
    {"color", (getter)get_color, NULL, "active colour number, -1 for none", NULL},
    {"pending", (getter)get_pending, NULL, NULL, NULL},
    {"turns", (getter)get_turns, NULL, NULL, NULL},
    {"pile_count", (getter)get_pile_count, NULL, NULL, NULL},
    {"uno", (getter)get_uno, NULL, NULL, NULL},
    {"hands", (getter)get_hands, NULL, "card ids per seat (fresh lists)", NULL},
    {"hand_codes", (getter)get_hand_codes, NULL, "card codes per seat (fresh lists)", NULL},
    {"discard", (getter)get_discard, NULL, "card ids of the discard pile", NULL},
    {"discard_codes", (getter)get_discard_codes, NULL, NULL, NULL},
    {NULL}
};

static PyMethodDef core_methods[] = {
    {"legal_actions", (PyCFunction)core_legal_actions, METH_NOARGS, "every action allowed now (fresh dicts)"},
    {"legal_action_ids", (PyCFunction)core_legal_action_ids, METH_NOARGS, "the legal action ids"},
    {"observation", (PyCFunction)core_observation, METH_NOARGS, "the observation of the seat asked now"},
    {"snapshot", (PyCFunction)core_snapshot, METH_NOARGS, "the observation of the seat asked now, read-only and lazy"},
    {"apply", (PyCFunction)core_apply, METH_O, "apply the reply of the seat asked now"},
    {"step", (PyCFunction)core_step, METH_O, "apply the legal action id"},
    {"play_ids", (PyCFunction)core_play_ids, METH_O,
     "play_ids(policy): step(policy(legal_action_ids())) until the game is over; the decisions played"},
    {"apply_fallback", (PyCFunction)core_apply_fallback, METH_NOARGS, "play the first legal action"},
    {"fault", (PyCFunction)(void (*)(void))core_fault, METH_VARARGS | METH_KEYWORDS, "record a fault of the seat asked"},
    {"ranks", (PyCFunction)core_ranks, METH_NOARGS, "rank per seat by game score"},
    {"_play_turns", (PyCFunction)core_play_turns, METH_VARARGS, "the referee's turn loop (engine.compiled.play_turns)"},
    {NULL}
};

static PyTypeObject CoreType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "engine._core.Core",
    .tp_basicsize = sizeof(Core),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_doc = "One UNO game in C: engine.game.Game's state machine (engine.compiled.CompiledGame).",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)core_init,
    .tp_dealloc = (destructor)core_dealloc,
    .tp_methods = core_methods,
    .tp_getset = core_getset,
};

static PyObject *set_hook(PyObject *m, PyObject *hook) {
    Py_XSETREF(HOOK_ILLEGAL, Py_NewRef(hook));
    Py_RETURN_NONE;
}

static PyObject *set_rules_type(PyObject *m, PyObject *type) {
    if (!PyType_Check(type)) {
        PyErr_SetString(PyExc_TypeError, "set_rules_type: a class");
        return NULL;
    }
    Py_XSETREF(RULES_TYPE, Py_NewRef(type));
    Py_RETURN_NONE;
}

/* ---- environments (engine/envs.py) ----
 * What engine.envs' PettingZoo environment does every step, without Python bytecode.
 *
 * Observations(new_pair): where the observations of one environment come from.
 * ``observe(game, seat, live)`` is the observation dict of ``seat``, {"observation": its
 * numeric observation (engine.envs.encode, layout engine.envs.LAYOUT), "action_mask": 1 for
 * each legal id when ``live`` and the game asks ``seat`` now, else all 0}, both int8 arrays
 * the caller alone holds. The arrays come from ``new_pair()`` (a fresh observation array and
 * mask array) or are a pair handed out before that no one holds any more: only this object
 * refers to either array (no dict, view, buffer or weak reference), and neither was changed
 * but in content (same memory, shape, dtype, flags), which nothing can tell from a fresh
 * pair. The pure version, engine.envs.observe_into, stays the reference and the fallback;
 * tests/engine/test_envs.py compares them on many states.
 *
 * AECBase: the base of engine.envs' AEC environment (engine.envs._aec_class) when the core
 * is built: its state as slots (the attributes PettingZoo names, read and written as usual),
 * and ``last``, ``step``, ``agent_iter`` and reset's state (``_reset_state``) for a compiled game's common case. Anything else
 * (before reset, a pure game, an id the game refuses, the game's end, dead steps) is the
 * Python methods' (``_py_last``, ``_py_step``, ``_py_agent_iter``, ``_game_over``), which
 * stay the reference. */
#define ENV_OBS_SIZE (NUM_KINDS + NUM_KINDS + 4 + N_DECISIONS + MAX_SEATS + MAX_SEATS + 3)
#define ENV_RING 4  /* pairs kept for reuse: a loop holds one observation while asking the next */

static PyObject *ENV_S_observation, *ENV_S_action_mask, *ENV_S_py_last, *ENV_S_py_step, *ENV_S_py_agent_iter,
    *ENV_S_game_over, *ENV_ZERO, *ENV_S_legal_action_ids, *ENV_NO_IDS;

static void env_fill(Core *g, int s, int live, int8_t *v, int8_t *mask) {
    memset(v, 0, ENV_OBS_SIZE);
    memset(mask, 0, NUM_ACTIONS);
    int n = g->n;
    int8_t *hand = v, *top = hand + NUM_KINDS, *color = top + NUM_KINDS, *decision = color + 4;
    int8_t *sizes = decision + N_DECISIONS, *uno = sizes + MAX_SEATS, *rest = uno + MAX_SEATS;
    memcpy(hand, g->kcnt[s], NUM_KINDS);  /* counts of at most 4: the same bytes as int8 */
    top[DECK[g->discard[g->dlen - 1]]] = 1;
    if (g->color >= 0) color[g->color] = 1;
    if (!g->over) decision[g->decision] = 1;
    for (int i = 0, t = s; i < n; i++, t = t + 1 == n ? 0 : t + 1) {
        int size = g->hlen[t];
        sizes[i] = (int8_t)(size < DECK_SIZE ? size : DECK_SIZE);
        uno[i] = (int8_t)(g->uno[t] != 0);
    }
    rest[0] = (int8_t)(g->direction == 1);
    if (!g->over && (g->decision == D_STACK || g->decision == D_CHALLENGE))
        rest[1] = (int8_t)(g->pending < DECK_SIZE ? g->pending : DECK_SIZE);
    rest[2] = (int8_t)(g->pile_count < DECK_SIZE ? g->pile_count : DECK_SIZE);
    if (live && !g->over && g->seat == s) {
        compute_legal(g);
        for (int i = 0; i < g->nlegal; i++) mask[g->legal[i]] = 1;
    }
}

/* The head of a numpy array (numpy's PyArrayObject_fields, unchanged since numpy 1.7), read
 * only to tell a recycled array is as it was handed out; Observations checks it against the
 * buffer protocol on every new array and recycles nothing where they disagree. */
typedef struct {
    PyObject_HEAD
    char *data;
    int nd;
    Py_ssize_t *dimensions;
    Py_ssize_t *strides;
    PyObject *base;
    PyObject *descr;
    int flags;
} NpHead;

typedef struct {
    PyObject *arr[2];     /* observation, mask (NULL: empty place) */
    PyObject *dict;       /* the dict handing them out, kept for reuse with them (NULL: none kept) */
    char *data[2];
    PyObject *descr[2];   /* borrowed: compared only, as the array was handed out */
    int flags[2];
    int recyclable;
} EnvPair;

typedef struct {
    PyObject_HEAD
    PyObject *new_pair;
    int count, next;
    EnvPair ring[ENV_RING];
} Observations;

static const Py_ssize_t ENV_LEN[2] = {ENV_OBS_SIZE, NUM_ACTIONS};

static void pair_clear(EnvPair *p) {
    Py_CLEAR(p->dict);
    Py_CLEAR(p->arr[0]);
    Py_CLEAR(p->arr[1]);
}

#if PY_VERSION_HEX >= 0x030B0000 && PY_VERSION_HEX < 0x030D0000
static ObsEntry *env_entries(PyObject *d);
#endif

/* only this pair refers to its arrays (and to its dict, if it keeps one: a dict that holds the two
 * arrays and nothing else, in the order handed out), as they were handed out */
static inline int pair_free(const EnvPair *p) {
    if (!p->recyclable) return 0;
    Py_ssize_t refs = 1;
    if (p->dict) {
#if PY_VERSION_HEX >= 0x030B0000 && PY_VERSION_HEX < 0x030D0000
        if (Py_REFCNT(p->dict) != 1) return 0;
        ObsEntry *e = env_entries(p->dict);
        if (!e || e[0].key != ENV_S_observation || e[0].value != p->arr[0] || e[1].key != ENV_S_action_mask ||
            e[1].value != p->arr[1])
            return 0;
        refs = 2;
#else
        return 0;
#endif
    }
    for (int j = 0; j < 2; j++) {
        PyObject *a = p->arr[j];
        const NpHead *h = (const NpHead *)a;
        if (Py_REFCNT(a) != refs || h->data != p->data[j] || h->nd != 1 || h->dimensions[0] != ENV_LEN[j] ||
            h->strides[0] != 1 || h->base != NULL || h->descr != p->descr[j] || h->flags != p->flags[j])
            return 0;
        Py_ssize_t weak = Py_TYPE(a)->tp_weaklistoffset;
        if (weak > 0 && *(PyObject **)((char *)a + weak) != NULL) return 0;
    }
    return 1;
}

/* a new pair from new_pair(), checked: two writable C-contiguous int8 arrays of the right sizes */
static int pair_new(Observations *o, EnvPair *p) {
    PyObject *pair = PyObject_CallNoArgs(o->new_pair);
    if (!pair) return -1;
    if (!PyTuple_Check(pair) || PyTuple_GET_SIZE(pair) != 2) {
        Py_DECREF(pair);
        PyErr_SetString(PyExc_TypeError, "Observations: new_pair() must give (observation array, mask array)");
        return -1;
    }
    p->recyclable = 1;
    for (int j = 0; j < 2; j++) {
        PyObject *a = PyTuple_GET_ITEM(pair, j);
        Py_buffer view;
        if (PyObject_GetBuffer(a, &view, PyBUF_WRITABLE | PyBUF_FORMAT | PyBUF_STRIDES) < 0) {
            Py_DECREF(pair);
            pair_clear(p);
            return -1;
        }
        int ok = view.ndim == 1 && view.shape[0] == ENV_LEN[j] && view.itemsize == 1 && view.strides[0] == 1 &&
                 view.format && strcmp(view.format, "b") == 0;
        char *buf = view.buf;
        PyBuffer_Release(&view);
        if (!ok) {
            Py_DECREF(pair);
            pair_clear(p);
            PyErr_SetString(PyExc_ValueError, "Observations: new_pair() must give 1-d int8 arrays of the sizes");
            return -1;
        }
        p->arr[j] = Py_NewRef(a);
        p->data[j] = buf;
        /* a numpy array whose head reads as the buffer says, owning its memory, nothing else referring to it */
        if (strcmp(Py_TYPE(a)->tp_name, "numpy.ndarray") != 0 || Py_TYPE(a)->tp_basicsize < (Py_ssize_t)sizeof(NpHead)) {
            p->recyclable = 0;
            continue;
        }
        const NpHead *h = (const NpHead *)a;
        p->descr[j] = h->descr;
        p->flags[j] = h->flags;
        if (h->data != buf || h->nd != 1 || h->dimensions[0] != ENV_LEN[j] || h->strides[0] != 1 ||
            h->base != NULL || Py_REFCNT(a) != 2)
            p->recyclable = 0;
    }
    Py_DECREF(pair);
    return 0;
}

/* The observation dict {"observation": obs, "action_mask": mask} (new references to both). As the
 * core's observation (obs_dict): on CPython 3.11 and 3.12 a copy of ENV_TEMPLATE whose two value slots
 * are written in place (a third of the instructions of inserting two keys into a new dict, or of
 * replacing the values by PyDict_SetItem), where env_init found a copy laid out as the ObsKeys and
 * ObsEntry mirror says; otherwise two inserts. */
static PyObject *ENV_TEMPLATE;  /* {"observation": None, "action_mask": None} */
static int ENV_IN_PLACE;

#if PY_VERSION_HEX >= 0x030B0000 && PY_VERSION_HEX < 0x030D0000
/* the two entries of ``d`` when it is laid out as a copy of ENV_TEMPLATE must be, else NULL (as obs_entries) */
static ObsEntry *env_entries(PyObject *d) {
    PyDictObject *mp = (PyDictObject *)d;
    ObsKeys *k = (ObsKeys *)mp->ma_keys;
    if (mp->ma_values || mp->ma_used != 2 || k->dk_kind != OBS_UNICODE_KIND || k->dk_nentries != 2) return NULL;
    return (ObsEntry *)(k->dk_indices + ((size_t)1 << k->dk_log2_index_bytes));
}
#endif

static int env_init(void) {
    if (!(ENV_TEMPLATE = make_dict(2, ENV_S_observation, Py_NewRef(Py_None), ENV_S_action_mask, Py_NewRef(Py_None))))
        return -1;
#if PY_VERSION_HEX >= 0x030B0000 && PY_VERSION_HEX < 0x030D0000
    PyObject *d = PyDict_Copy(ENV_TEMPLATE);
    if (!d) return -1;
    ObsEntry *e = env_entries(d);
    ENV_IN_PLACE = e != NULL && Py_REFCNT(d) == 1 && e[0].key == ENV_S_observation && e[0].value == Py_None &&
                   e[1].key == ENV_S_action_mask && e[1].value == Py_None;
    Py_DECREF(d);
#endif
    return 0;
}

static PyObject *env_dict(PyObject *obs, PyObject *mask) {
#if PY_VERSION_HEX >= 0x030B0000 && PY_VERSION_HEX < 0x030D0000
    if (ENV_IN_PLACE) {
        PyObject *d = PyDict_Copy(ENV_TEMPLATE);
        ObsEntry *e = d ? env_entries(d) : NULL;
        if (e) {
            PyObject *old[2] = {e[0].value, e[1].value};
            e[0].value = Py_NewRef(obs);
            e[1].value = Py_NewRef(mask);
            Py_DECREF(old[0]);
            Py_DECREF(old[1]);
            /* the template holds nothing the cyclic GC tracks, nor does its copy: track it if a value may be */
            if (!PyObject_GC_IsTracked(d) && (PyObject_IS_GC(obs) || PyObject_IS_GC(mask))) PyObject_GC_Track(d);
            return d;
        }
        Py_XDECREF(d);
    }
#endif
    return make_dict(2, ENV_S_observation, Py_NewRef(obs), ENV_S_action_mask, Py_NewRef(mask));
}

/* A pair to fill: one no one else holds (with its dict, if it keeps one), else a new one. Called before
 * the game is read: letting the oldest pair go may run Python code (a finalizer of what was put in its dict). */
static EnvPair *observations_pair(Observations *o, EnvPair *dropped) {
    EnvPair *p = NULL;
    for (int k = 0; k < o->count; k++) {
        int i = (o->next + k) % o->count;
        if (pair_free(&o->ring[i])) {
            p = &o->ring[i];
            o->next = (i + 1) % o->count;
            break;
        }
    }
    if (!p) {
        EnvPair fresh = {{NULL, NULL}, NULL, {NULL, NULL}, {NULL, NULL}, {0, 0}, 0};
        if (pair_new(o, &fresh) < 0) return NULL;
        if (o->count < ENV_RING) {
            p = &o->ring[o->count++];
        } else {  /* every kept pair is held: let the oldest go */
            p = &o->ring[o->next];
            *dropped = *p;  /* cleared by the caller once it holds what it hands out (that may run Python code) */
            o->next = (o->next + 1) % ENV_RING;
        }
        *p = fresh;
    }
    return p;
}

/* The pair's observation of ``seat``: its dict, the same dict again when the pair was handed out with
 * it before and no one holds it (a dict no one holds, with the same two arrays in the same order, is
 * what a new one would be), else a new one (kept with the pair where env_entries can check it). */
static PyObject *pair_observe(EnvPair *p, Core *g, int seat, int live) {
    env_fill(g, seat, live, (int8_t *)p->data[0], (int8_t *)p->data[1]);
    if (p->dict) return Py_NewRef(p->dict);
    PyObject *d = env_dict(p->arr[0], p->arr[1]);
    if (d && ENV_IN_PLACE && p->recyclable) p->dict = Py_NewRef(d);
    return d;
}

static PyObject *observations_get(Observations *o, Core *g, int seat, int live) {
    EnvPair dropped = {{NULL, NULL}, NULL, {NULL, NULL}, {NULL, NULL}, {0, 0}, 0};
    EnvPair *p = observations_pair(o, &dropped);
    PyObject *r = p ? pair_observe(p, g, seat, live) : NULL;
    pair_clear(&dropped);
    return r;
}

static Core *env_game(PyObject *game) {
    if (!PyObject_TypeCheck(game, &CoreType)) {
        PyErr_SetString(PyExc_TypeError, "engine.envs: the game must be a compiled game");
        return NULL;
    }
    return check_ready((Core *)game) < 0 ? NULL : (Core *)game;
}

static PyObject *observations_observe(Observations *o, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "observe(game, seat, live)");
        return NULL;
    }
    Core *g = env_game(args[0]);
    if (!g) return NULL;
    long seat = PyLong_AsLong(args[1]);
    if (seat == -1 && PyErr_Occurred()) return NULL;
    if (seat < 0 || seat >= g->n) {
        PyErr_SetString(PyExc_ValueError, "observe: no such seat");
        return NULL;
    }
    int live = PyObject_IsTrue(args[2]);
    if (live < 0) return NULL;
    return observations_get(o, g, (int)seat, live);
}

static int observations_init(Observations *o, PyObject *args, PyObject *kwds) {
    PyObject *new_pair;
    if (!PyArg_ParseTuple(args, "O:Observations", &new_pair)) return -1;
    Py_XSETREF(o->new_pair, Py_NewRef(new_pair));
    for (int i = 0; i < o->count; i++) pair_clear(&o->ring[i]);
    o->count = o->next = 0;
    return 0;
}

static int observations_traverse(Observations *o, visitproc visit, void *arg) {
    Py_VISIT(o->new_pair);
    for (int i = 0; i < o->count; i++) {
        Py_VISIT(o->ring[i].dict);
        Py_VISIT(o->ring[i].arr[0]);
        Py_VISIT(o->ring[i].arr[1]);
    }
    return 0;
}

static int observations_clear(Observations *o) {
    Py_CLEAR(o->new_pair);
    for (int i = 0; i < o->count; i++) pair_clear(&o->ring[i]);
    o->count = o->next = 0;
    return 0;
}

static void observations_dealloc(Observations *o) {
    PyObject_GC_UnTrack(o);
    observations_clear(o);
    Py_TYPE(o)->tp_free((PyObject *)o);
}

static PyMethodDef observations_methods[] = {
    {"observe", (PyCFunction)(void (*)(void))observations_observe, METH_FASTCALL,
     "observe(game, seat, live): the observation dict of seat, in arrays only the caller holds"},
    {NULL}
};

static PyTypeObject ObservationsType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "engine._core.Observations",
    .tp_basicsize = sizeof(Observations),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_doc = "Observations(new_pair): engine.envs' observation dicts, reusing the arrays no one holds.",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)observations_init,
    .tp_dealloc = (destructor)observations_dealloc,
    .tp_traverse = (traverseproc)observations_traverse,
    .tp_clear = (inquiry)observations_clear,
    .tp_methods = observations_methods,
};

/* What a dict of the environment gave for each seat's agent, while that dict is unchanged: last() reads
 * four dicts a step and step() the infos, and a lookup costs ~110 instructions where checking the cache
 * costs ~10. PEP 509 (CPython up to 3.11; deprecated in 3.12): a dict's ma_version_tag changes whenever
 * the dict does and is never shared by two dicts, so the same dict at the same version maps each key to
 * the same value, which it still holds (the values here are borrowed from it). The keys are
 * ``cache_agents[seat]`` (a tuple held, so compared by identity); another ``_agents`` clears the cache.
 * On other versions every read is a lookup. */
#if PY_VERSION_HEX < 0x030C0000
#define ENV_SEAT_CACHE 1
#endif
enum { SC_CUMULATIVE, SC_TERMINATIONS, SC_TRUNCATIONS, SC_INFOS, N_SEAT_CACHES };

typedef struct {
    PyObject *dict;               /* compared only */
    uint64_t version;
    PyObject *value[MAX_SEATS];   /* dict[cache_agents[seat]], borrowed from dict; NULL: not read yet */
} SeatCache;

typedef struct {
    PyObject_HEAD
    PyObject *game, *agents_t, *observations;
    PyObject *agent_selection, *agents, *rewards, *cumulative, *terminations, *truncations, *infos, *after_end;
    char live;
    PyObject *cache_agents;       /* the _agents the cache is of */
    PyObject *last_out;           /* the tuple last() gave last: filled again when no one else holds it */
    PyObject *spare_ids[NUM_ACTIONS + 1][2];  /* the last two ids tuples of each length made: refilled when no one else holds one */
    uint8_t spare_next[NUM_ACTIONS + 1];
    SeatCache cache[N_SEAT_CACHES];
} AECBase;

#define AEC_OBJECTS(X) X(game) X(agents_t) X(observations) X(agent_selection) X(agents) X(rewards) \
    X(cumulative) X(terminations) X(truncations) X(infos) X(after_end) X(cache_agents) X(last_out)

static int aec_traverse(AECBase *e, visitproc visit, void *arg) {
#define V(f) Py_VISIT(e->f);
    AEC_OBJECTS(V)
#undef V
    for (int n = 0; n <= NUM_ACTIONS; n++) {
        Py_VISIT(e->spare_ids[n][0]);
        Py_VISIT(e->spare_ids[n][1]);
    }
    return 0;
}

static int aec_clear(AECBase *e) {
#define C(f) Py_CLEAR(e->f);
    AEC_OBJECTS(C)
#undef C
    for (int n = 0; n <= NUM_ACTIONS; n++) {
        Py_CLEAR(e->spare_ids[n][0]);
        Py_CLEAR(e->spare_ids[n][1]);
    }
    return 0;
}

static void aec_dealloc(AECBase *e) {
    PyObject_GC_UnTrack(e);
    aec_clear(e);
    Py_TYPE(e)->tp_free((PyObject *)e);
}

/* the last subtype of Core aec_core saw (engine.compiled.CompiledGame), held: a type check without
 * PyType_IsSubtype's walk of the MRO on every call. It keeps one such type alive until another is seen
 * (a subclass made at run time outlives its last game until then: found by review, accepted) */ 
static PyTypeObject *AEC_CORE_SUBTYPE;

/* the compiled game playing, or NULL (none yet, or a pure one) */
static inline Core *aec_core(AECBase *e) {
    PyObject *g = e->game;
    if (!g) return NULL;
    PyTypeObject *t = Py_TYPE(g);
    if (t != AEC_CORE_SUBTYPE && t != &CoreType) {
        if (!PyType_IsSubtype(t, &CoreType)) return NULL;
        Py_XSETREF(AEC_CORE_SUBTYPE, (PyTypeObject *)Py_NewRef(t));
    }
    return ((Core *)g)->rules ? (Core *)g : NULL;
}

static PyObject *dict_item(PyObject *d, PyObject *key) {
    if (d && PyDict_CheckExact(d)) {
        PyObject *v = PyDict_GetItemWithError(d, key);
        if (v) return Py_NewRef(v);
        if (!PyErr_Occurred()) PyErr_SetObject(PyExc_KeyError, key);
        return NULL;
    }
    if (!d) {
        PyErr_SetString(PyExc_AttributeError, "engine.envs: a dict of the environment is missing");
        return NULL;
    }
    return PyObject_GetItem(d, key);
}


/* d[agent], agent being _agents[seat] (new reference), through the cache ``which`` while d is unchanged */
static Py_NO_INLINE PyObject *seat_item_read(AECBase *e, int which, PyObject *d, int seat, PyObject *agent) {
#ifdef ENV_SEAT_CACHE
    if (d && PyDict_CheckExact(d) && e->agents_t) {
        SeatCache *c = &e->cache[which];
        if (e->cache_agents != e->agents_t) {
            memset(e->cache, 0, sizeof e->cache);
            Py_XSETREF(e->cache_agents, Py_NewRef(e->agents_t));
        }
        uint64_t version = ((PyDictObject *)d)->ma_version_tag;
        if (c->dict == d && c->version == version) {
            if (c->value[seat]) return Py_NewRef(c->value[seat]);
        } else {
            memset(c, 0, sizeof *c);
            c->dict = d;
            c->version = version;
        }
        PyObject *v = PyDict_GetItemWithError(d, agent);
        if (!v) {
            if (!PyErr_Occurred()) PyErr_SetObject(PyExc_KeyError, agent);
            return NULL;
        }
        c->value[seat] = v;  /* a lookup that changed d (a key's __eq__) changed its version too */
        return Py_NewRef(v);
    }
#endif
    return dict_item(d, agent);
}

/* seat_item_read with its usual case (the value cached, the dict unchanged) inlined in last() and step() */
static inline PyObject *seat_item(AECBase *e, int which, PyObject *d, int seat, PyObject *agent) {
#ifdef ENV_SEAT_CACHE
    const SeatCache *c = &e->cache[which];
    if (d && c->dict == d && PyDict_CheckExact(d) && e->agents_t && e->cache_agents == e->agents_t &&
        c->version == ((PyDictObject *)d)->ma_version_tag && c->value[seat])
        return Py_NewRef(c->value[seat]);
#endif
    return seat_item_read(e, which, d, seat, agent);
}

/* self.<name>(*args, **kwargs) for a call the C methods leave to the Python ones */
static PyObject *aec_delegate(AECBase *e, PyObject *name, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames) {
    Py_ssize_t total = nargs + (kwnames ? PyTuple_GET_SIZE(kwnames) : 0);
    PyObject *stack[8];
    if (total > 7) {
        PyErr_SetString(PyExc_TypeError, "engine.envs: too many arguments");
        return NULL;
    }
    stack[0] = (PyObject *)e;
    for (Py_ssize_t i = 0; i < total; i++) stack[1 + i] = args[i];
    return PyObject_VectorcallMethod(name, stack, 1 + nargs, kwnames);
}

static PyObject *aec_last(AECBase *e, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames) {
    /* the tuple last() gave before, if no one else holds it (a tuple only this call holds, filled with the
     * new values, is what a new one would be): emptied first, as dropping its values may run Python code */
    PyObject *out = NULL;
    if (e->last_out && Py_REFCNT(e->last_out) == 1 && nargs == 0 && !kwnames) {
        out = e->last_out;
        e->last_out = NULL;
        PyObject_GC_UnTrack(out);  /* not handed out by gc.get_objects() while emptied */
        for (Py_ssize_t i = 0; i < 5; i++) {
            PyObject *v = PyTuple_GET_ITEM(out, i);
            PyTuple_SET_ITEM(out, i, NULL);
            Py_XDECREF(v);
        }
    }
    /* then the pair: getting it may run Python code too (see observations_pair), before anything is read */
    EnvPair *p = NULL;
    Observations *o = NULL;  /* held while p is used */
    EnvPair dropped = {{NULL, NULL}, NULL, {NULL, NULL}, {NULL, NULL}, {0, 0}, 0};  /* a pair let go: cleared last */
    if (e->observations && Py_IS_TYPE(e->observations, &ObservationsType) && nargs == 0 && !kwnames && e->game) {
        o = (Observations *)Py_NewRef(e->observations);
        if (!(p = observations_pair(o, &dropped))) {
            Py_DECREF(o);
            Py_XDECREF(out);
            return NULL;
        }
    }
    Core *g = aec_core(e);
    PyObject *agent = e->agent_selection;
    Py_ssize_t seat = -1;
    if (p && g && agent && e->agents_t && PyTuple_CheckExact(e->agents_t) && PyTuple_GET_SIZE(e->agents_t) == g->n &&
        e->observations == (PyObject *)o)
        for (Py_ssize_t s = 0; s < g->n; s++)
            if (PyTuple_GET_ITEM(e->agents_t, s) == agent) { seat = s; break; }
    if (seat < 0) {  /* anything but last() on a compiled game's agent: the Python method */
        Py_XDECREF(o);
        Py_XDECREF(out);
        pair_clear(&dropped);
        return aec_delegate(e, ENV_S_py_last, args, nargs, kwnames);
    }
    Py_INCREF(agent);
    if (!out && !(out = PyTuple_New(5))) goto fail;
    PyObject *obs = pair_observe(p, g, (int)seat, e->live);
    if (!obs) goto fail;
    PyTuple_SET_ITEM(out, 0, obs);
    /* each read as the Python last() reads it, then, and held while it is read: a lookup may run Python
     * code (a dict subclass's __getitem__, a key's __eq__) that replaces the environment's dicts */
    PyObject **fields[N_SEAT_CACHES] = {&e->cumulative, &e->terminations, &e->truncations, &e->infos};
    for (int i = 0; i < N_SEAT_CACHES; i++) {
        PyObject *d = Py_XNewRef(*fields[i]);
        PyObject *v = seat_item(e, i, d, (int)seat, agent);
        Py_XDECREF(d);
        if (!v) goto fail;
        PyTuple_SET_ITEM(out, 1 + i, v);
    }
    Py_DECREF(agent);
    Py_DECREF(o);
    if (!PyObject_GC_IsTracked(out)) PyObject_GC_Track(out);
    Py_XSETREF(e->last_out, Py_NewRef(out));
    pair_clear(&dropped);
    return out;
fail:
    Py_DECREF(agent);
    Py_DECREF(o);
    Py_XDECREF(out);
    pair_clear(&dropped);
    return NULL;
}

/* infos[agent]["legal_action_ids"] = ids (what engine.envs' _set_ids does), -1 on error */
static int aec_set_ids(AECBase *e, PyObject *agent, PyObject *ids) {
    int seat = -1;
    if (e->agents_t && PyTuple_CheckExact(e->agents_t))
        for (Py_ssize_t s = 0; s < PyTuple_GET_SIZE(e->agents_t) && s < MAX_SEATS; s++)
            if (PyTuple_GET_ITEM(e->agents_t, s) == agent) { seat = (int)s; break; }
    PyObject *info = seat < 0 ? dict_item(e->infos, agent) : seat_item(e, SC_INFOS, e->infos, seat, agent);
    if (!info) return -1;
    int r = PyDict_CheckExact(info) ? PyDict_SetItem(info, ENV_S_legal_action_ids, ids)
                                    : PyObject_SetItem(info, ENV_S_legal_action_ids, ids);
    Py_DECREF(info);
    return r;
}

/* the legal ids of the seat asked, ascending (the action mask's nonzero entries), as a tuple: one of
 * e's spare tuples of that length when no one else holds it, else a new one (kept as a spare) */
static PyObject *env_ids(AECBase *e, Core *g) {
    compute_legal(g);
    int n = g->nlegal;
    uint8_t ids[NUM_ACTIONS];
    for (int i = 0; i < n; i++) {  /* insertion sort: legal_action_ids() is nearly ascending already */
        uint8_t v = g->legal[i];
        int j = i;
        for (; j > 0 && ids[j - 1] > v; j--) ids[j] = ids[j - 1];
        ids[j] = v;
    }
    PyObject **spare = e->spare_ids[n];
#if PY_VERSION_HEX >= 0x030B0000 && PY_VERSION_HEX < 0x030D0000
    /* (3.11/3.12 only, as the other reuses: 3.14 caches a tuple's hash in the tuple, which a refill
     * would leave stale) */
    for (int k = 0; k < 2; k++) {
        PyObject *t = spare[k];
        if (t && Py_REFCNT(t) == 1) {  /* held by no one else: a tuple of these ids is what a new one would be */
            for (int i = 0; i < n; i++) {
                PyObject *old = PyTuple_GET_ITEM(t, i);
                PyTuple_SET_ITEM(t, i, small_int(ids[i]));
                Py_DECREF(old);  /* a small int: nothing is freed */
            }
            return Py_NewRef(t);
        }
    }
#endif
    PyObject *t = PyTuple_New(n);
    if (!t) return NULL;
    for (int i = 0; i < n; i++) PyTuple_SET_ITEM(t, i, small_int(ids[i]));
    if (n > 0) {  /* kept in place of the older of the two (a tuple of small ints: dropping it runs no Python code) */
        int k = e->spare_next[n];
        e->spare_next[n] = (uint8_t)(1 - k);
        Py_XSETREF(spare[k], Py_NewRef(t));
    }
    return t;
}

/* the game just ended: engine.envs' _game_over (each agent its rank's reward, all terminated), -1 on error;
 * 1 when it is left to the Python method (agents not the seats' list, a dict not a dict) */
static int aec_game_over(AECBase *e, Core *g) {
    PyObject *agents = e->agents, *cumulative = e->cumulative;
    if (!agents || !PyList_CheckExact(agents) || PyList_GET_SIZE(agents) != g->n || !cumulative ||
        !PyDict_CheckExact(cumulative) || !e->agent_selection)
        return 1;
    int same = 1, n = g->n;
    for (int s = 1; s < n; s++) same &= g->scores[s] == g->scores[0];
    long ranks[MAX_SEATS];
    compute_ranks(g, ranks);
    /* writing the infos may run Python code (a dropped value's finalizer): the lists and dicts read
     * after it are held, the agents' count checked again, and the game is over first (as _end does) */
    e->live = 0;
    Py_INCREF(agents);
    Py_INCREF(cumulative);
    PyObject *rewards = NULL, *terminations = NULL;
    for (int s = 0; s < n; s++) {  /* no agent is asked any more */
        if (PyList_GET_SIZE(agents) != n) break;
        PyObject *a = Py_NewRef(PyList_GET_ITEM(agents, s));
        int r = aec_set_ids(e, a, ENV_NO_IDS);
        Py_DECREF(a);
        if (r < 0) goto fail;
    }
    if (PyList_GET_SIZE(agents) != n) {
        PyErr_SetString(PyExc_RuntimeError, "the environment's agents changed while its game ended");
        goto fail;
    }
    rewards = PyDict_New();
    terminations = PyDict_New();
    if (!rewards || !terminations) goto fail;
    for (int s = 0; s < n; s++) {
        PyObject *a = PyList_GET_ITEM(agents, s);
        double r = same ? 0.0 : (double)(g->n + 1 - 2 * ranks[s]) / (double)(g->n - 1);
        PyObject *value = PyFloat_FromDouble(r);
        if (!value || PyDict_SetItem(rewards, a, value) < 0) { Py_XDECREF(value); goto fail; }
        PyObject *before = Py_XNewRef(PyDict_GetItemWithError(cumulative, a));
        if (!before) {
            Py_DECREF(value);
            if (!PyErr_Occurred()) PyErr_SetObject(PyExc_KeyError, a);
            goto fail;
        }
        PyObject *sum = PyNumber_Add(before, value);
        Py_DECREF(before);
        Py_DECREF(value);
        if (!sum || PyDict_SetItem(cumulative, a, sum) < 0) { Py_XDECREF(sum); goto fail; }
        Py_DECREF(sum);
        if (PyDict_SetItem(terminations, a, Py_True) < 0) goto fail;
        if (PyList_GET_SIZE(agents) != n) {
            PyErr_SetString(PyExc_RuntimeError, "the environment's agents changed while its game ended");
            goto fail;
        }
    }
    if (!e->agent_selection) {
        PyErr_SetString(PyExc_RuntimeError, "the environment has no agent selected");
        goto fail;
    }
    Py_XSETREF(e->rewards, rewards);
    Py_XSETREF(e->terminations, terminations);
    Py_XSETREF(e->after_end, Py_NewRef(e->agent_selection));
    Py_DECREF(agents);
    Py_DECREF(cumulative);
    return 0;
fail:
    Py_XDECREF(rewards);
    Py_XDECREF(terminations);
    Py_DECREF(agents);
    Py_DECREF(cumulative);
    return -1;
}

/* step(None) of a terminated agent: engine.envs' _dead_step (it leaves); 1 when left to the Python method */
static int aec_dead_step(AECBase *e) {
    PyObject *agents = e->agents, *agent = e->agent_selection;
    PyObject *dicts[5] = {e->terminations, e->truncations, e->rewards, e->cumulative, e->infos};
    if (!agents || !PyList_CheckExact(agents) || PyList_GET_SIZE(agents) == 0 || !agent || !e->after_end) return 1;
    for (int i = 0; i < 5; i++)
        if (!dicts[i] || !PyDict_CheckExact(dicts[i])) return 1;
    Py_ssize_t at = -1;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(agents); i++)
        if (PyList_GET_ITEM(agents, i) == agent) { at = i; break; }
    if (at < 0) return 1;
    /* what the step replaces is dropped last, all at once: the agent's five values, the agent, the
     * selection and rewards before (their finalizers, Python code, run once nothing borrowed is read) */
    PyObject *dropped[8] = {NULL};
    int rc = -1;
    for (int i = 0; i < 5; i++) {
        dropped[i] = Py_XNewRef(PyDict_GetItemWithError(dicts[i], agent));
        if (!dropped[i]) {
            if (!PyErr_Occurred()) PyErr_SetObject(PyExc_KeyError, agent);
            goto out;
        }
        if (PyDict_DelItem(dicts[i], agent) < 0) goto out;
    }
    dropped[5] = Py_NewRef(agent);
    if (PyList_SetSlice(agents, at, at + 1, NULL) < 0) goto out;
    Py_ssize_t left = PyList_GET_SIZE(agents);
    PyObject *rewards = PyDict_New();
    if (!rewards) goto out;
    for (Py_ssize_t i = 0; i < left; i++)
        if (PyDict_SetItem(rewards, PyList_GET_ITEM(agents, i), ENV_ZERO) < 0) { Py_DECREF(rewards); goto out; }
    dropped[6] = e->agent_selection;
    dropped[7] = e->rewards;
    e->agent_selection = Py_NewRef(left ? PyList_GET_ITEM(agents, 0) : e->after_end);
    e->rewards = rewards;
    rc = 0;
out:
    for (int j = 0; j < 8; j++) Py_XDECREF(dropped[j]);
    return rc;
}

/* aec_step with the game ``g`` (NULL: none playing) held by the caller: setting an info's ids drops the
 * value before, whose finalizer (Python code) may replace or drop the environment's game */
static PyObject *aec_step_held(AECBase *e, Core *g, PyObject *const *args, Py_ssize_t nargs) {
    if (g && nargs == 1 && !e->live && args[0] == Py_None) {
        int done = aec_dead_step(e);
        if (done < 0) return NULL;
        if (done == 0) Py_RETURN_NONE;
    }
    if (g && nargs == 1 && e->live && !g->over && PyLong_CheckExact(args[0]) && e->agents_t &&
        PyTuple_CheckExact(e->agents_t) && PyTuple_GET_SIZE(e->agents_t) == g->n) {
        int overflow = 0;
        long id = PyLong_AsLongAndOverflow(args[0], &overflow);
        if (!overflow && id >= 0 && id < NUM_ACTIONS && legal_index(g, (int)id) >= 0) {
            if (commit(g, (int)id, g->legal_uno && id_is_play((int)id)) < 0) return NULL;
            if (g->over) {
                int done = aec_game_over(e, g);
                if (done < 0) return NULL;
                if (done == 1) return PyObject_CallMethodNoArgs((PyObject *)e, ENV_S_game_over);
                Py_RETURN_NONE;
            }
            /* the agent asked now gets the ids, the one asked before (if another) none */
            PyObject *before = Py_XNewRef(e->agent_selection), *now = Py_NewRef(PyTuple_GET_ITEM(e->agents_t, g->seat));
            PyObject *ids = env_ids(e, g);  /* before any info is written (that may run Python code) */
            if (!ids || (before != now && before && aec_set_ids(e, before, ENV_NO_IDS) < 0) ||
                aec_set_ids(e, now, ids) < 0) {
                Py_XDECREF(ids);
                Py_XDECREF(before);
                Py_DECREF(now);
                return NULL;
            }
            Py_DECREF(ids);
            Py_XDECREF(before);
            Py_XSETREF(e->agent_selection, now);
            Py_RETURN_NONE;
        }
    }
    /* before reset, a pure game, a refused id, a dead step: the Python method */
    return aec_delegate(e, ENV_S_py_step, args, nargs, NULL);
}

static PyObject *aec_step(AECBase *e, PyObject *const *args, Py_ssize_t nargs) {
    Core *g = aec_core(e);
    Py_XINCREF((PyObject *)g);
    PyObject *r = aec_step_held(e, g, args, nargs);
    Py_XDECREF((PyObject *)g);
    return r;
}

typedef struct {
    PyObject_HEAD
    AECBase *env;
    long long left;  /* -1: no bound */
} AgentIter;

static void agent_iter_dealloc(AgentIter *it) {
    PyObject_GC_UnTrack(it);
    Py_CLEAR(it->env);
    PyObject_GC_Del(it);
}

static int agent_iter_traverse(AgentIter *it, visitproc visit, void *arg) {
    Py_VISIT(it->env);
    return 0;
}

static PyObject *agent_iter_next(AgentIter *it) {
    AECBase *e = it->env;
    if (!e || it->left == 0) return NULL;
    PyObject *agents = e->agents;
    int any = agents == NULL ? 0 : PyList_CheckExact(agents) ? PyList_GET_SIZE(agents) > 0 : PyObject_IsTrue(agents);
    if (any < 0) return NULL;
    if (!any || !e->agent_selection) {
        Py_CLEAR(it->env);
        return NULL;
    }
    if (it->left > 0) it->left--;
    return Py_NewRef(e->agent_selection);
}

static PyTypeObject AgentIterType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "engine._core.AgentIter",
    .tp_basicsize = sizeof(AgentIter),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_doc = "The agent to act, until no agent is left or max_iter steps (PettingZoo's agent_iter).",
    .tp_dealloc = (destructor)agent_iter_dealloc,
    .tp_traverse = (traverseproc)agent_iter_traverse,
    .tp_iter = PyObject_SelfIter,
    .tp_iternext = (iternextfunc)agent_iter_next,
};

static PyObject *aec_agent_iter(AECBase *e, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames) {
    Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    if (!e->game || nargs + nkw > 1 || (nkw && PyUnicode_CompareWithASCIIString(PyTuple_GET_ITEM(kwnames, 0), "max_iter")))
        return aec_delegate(e, ENV_S_py_agent_iter, args, nargs, kwnames);
    long long left = -1;
    if (nargs + nkw) {
        int overflow = 0;
        left = PyLong_AsLongLongAndOverflow(args[0], &overflow);
        if (left == -1 && PyErr_Occurred()) return NULL;
        if (overflow > 0) left = -1;
        else if (overflow < 0 || left < 0) left = 0;
    }
    AgentIter *it = PyObject_GC_New(AgentIter, &AgentIterType);
    if (!it) return NULL;
    it->env = (AECBase *)Py_NewRef(e);
    it->left = left;
    PyObject_GC_Track(it);
    return (PyObject *)it;
}

/* {agent: value for agent in agents} (value shared, as dict.fromkeys) */
static PyObject *env_fromkeys(PyObject *agents, PyObject *value) {
    PyObject *d = PyDict_New();
    if (!d) return NULL;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(agents); i++)
        if (PyDict_SetItem(d, PyList_GET_ITEM(agents, i), value) < 0) { Py_DECREF(d); return NULL; }
    return d;
}

/* _reset_state(possible_agents): what engine.envs' reset does after making the game, for a compiled game
 * whose possible_agents are _agents (a list of the same str objects): True when done, False when left to
 * the Python code (nothing changed then) */
static PyObject *aec_reset_state(AECBase *e, PyObject *possible) {
    Core *g = aec_core(e);
    PyObject *t = e->agents_t;
    if (!g || g->over || !t || !PyTuple_CheckExact(t) || PyTuple_GET_SIZE(t) != g->n || !PyList_CheckExact(possible) ||
        PyList_GET_SIZE(possible) != g->n)
        Py_RETURN_FALSE;
    for (Py_ssize_t s = 0; s < g->n; s++)
        if (PyList_GET_ITEM(possible, s) != PyTuple_GET_ITEM(t, s) || !PyUnicode_CheckExact(PyTuple_GET_ITEM(t, s)))
            Py_RETURN_FALSE;
    Py_INCREF(g);
    PyObject *agents = PyList_GetSlice(possible, 0, g->n), *state[5] = {NULL, NULL, NULL, NULL, NULL};
    PyObject *ids = NULL, *infos = NULL;
    if (!agents || !(state[0] = env_fromkeys(agents, ENV_ZERO)) || !(state[1] = env_fromkeys(agents, ENV_ZERO)) ||
        !(state[2] = env_fromkeys(agents, Py_False)) || !(state[3] = env_fromkeys(agents, Py_False)) ||
        !(ids = env_ids(e, g)) || !(infos = PyDict_New()))
        goto fail;
    for (int s = 0; s < g->n; s++) {
        PyObject *info = make_dict(1, ENV_S_legal_action_ids, Py_NewRef(s == g->seat ? ids : ENV_NO_IDS));
        int r = info ? PyDict_SetItem(infos, PyList_GET_ITEM(agents, s), info) : -1;
        Py_XDECREF(info);
        if (r < 0) goto fail;
    }
    Py_DECREF(ids);
    /* nothing above ran Python code (str keys, dicts and tuples of ints): set as reset does, every field
     * first and the values before dropped last (their finalizers may run Python code, which then sees the
     * whole new state, and nothing borrowed is read after) */
    PyObject *old[7] = {e->agents, e->rewards, e->cumulative, e->terminations, e->truncations, e->infos, e->agent_selection};
    e->live = 1;
    e->agent_selection = Py_NewRef(PyTuple_GET_ITEM(t, g->seat));
    e->agents = agents;
    e->rewards = state[0];
    e->cumulative = state[1];
    e->terminations = state[2];
    e->truncations = state[3];
    e->infos = infos;
    for (int i = 0; i < 7; i++) Py_XDECREF(old[i]);
    Py_DECREF(g);
    Py_RETURN_TRUE;
fail:
    Py_XDECREF(agents);
    for (int i = 0; i < 4; i++) Py_XDECREF(state[i]);
    Py_XDECREF(ids);
    Py_XDECREF(infos);
    Py_DECREF(g);
    return NULL;
}

static PyMethodDef aec_methods[] = {
    {"_reset_state", (PyCFunction)aec_reset_state, METH_O,
     "_reset_state(possible_agents): reset's state for a compiled game (True), or nothing (False)"},
    {"last", (PyCFunction)(void (*)(void))aec_last, METH_FASTCALL | METH_KEYWORDS,
     "last(observe=True): (observation, cumulative reward, terminated, truncated, info) of agent_selection"},
    {"step", (PyCFunction)(void (*)(void))aec_step, METH_FASTCALL, "step(action): agent_selection acts"},
    {"agent_iter", (PyCFunction)(void (*)(void))aec_agent_iter, METH_FASTCALL | METH_KEYWORDS,
     "agent_iter(max_iter=2**63): the agent to act, until no agent is left"},
    {NULL}
};

static PyMemberDef aec_members[] = {
    {"_game", T_OBJECT_EX, offsetof(AECBase, game), 0, "the game playing (set by reset)"},
    {"_agents", T_OBJECT_EX, offsetof(AECBase, agents_t), 0, "the agents by seat (tuple)"},
    {"_observations", T_OBJECT_EX, offsetof(AECBase, observations), 0, "the Observations of a compiled game"},
    {"agent_selection", T_OBJECT_EX, offsetof(AECBase, agent_selection), 0, NULL},
    {"agents", T_OBJECT_EX, offsetof(AECBase, agents), 0, NULL},
    {"rewards", T_OBJECT_EX, offsetof(AECBase, rewards), 0, NULL},
    {"_cumulative_rewards", T_OBJECT_EX, offsetof(AECBase, cumulative), 0, NULL},
    {"terminations", T_OBJECT_EX, offsetof(AECBase, terminations), 0, NULL},
    {"truncations", T_OBJECT_EX, offsetof(AECBase, truncations), 0, NULL},
    {"infos", T_OBJECT_EX, offsetof(AECBase, infos), 0, NULL},
    {"_after_end", T_OBJECT_EX, offsetof(AECBase, after_end), 0, "agent_selection when the game ended"},
    {"_live", T_BOOL, offsetof(AECBase, live), 0, "the game is on: no illegal id ended it"},
    {NULL}
};

static PyTypeObject AECBaseType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "engine._core.AECBase",
    .tp_basicsize = sizeof(AECBase),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC,
    .tp_doc = "The base of engine.envs' AEC environment: its state, and its hot methods for a compiled game.",
    .tp_new = PyType_GenericNew,
    .tp_dealloc = (destructor)aec_dealloc,
    .tp_traverse = (traverseproc)aec_traverse,
    .tp_clear = (inquiry)aec_clear,
    .tp_methods = aec_methods,
    .tp_members = aec_members,
};
/* ---- end of environments ---- */

/* ------------------------------------------------------------------ engine.match.game_seed
 * The seed of deal ``deal`` of a match seeded with ``seed``: the first 63 bits of
 * sha256("uno-arena:{seed}:{deal}") (the text's ints in decimal). engine.match.game_seed is
 * the reference; this one answers for ints that fit in 64 bits and returns None for any
 * other argument, which the caller then hands to the reference (tests/engine/test_compiled.py
 * compares the two). SHA-256 as FIPS 180-4: one or two blocks, the text is short. */
static const uint32_t SHA256_K[64] = {
    0x428a2f98U, 0x71374491U, 0xb5c0fbcfU, 0xe9b5dba5U, 0x3956c25bU, 0x59f111f1U, 0x923f82a4U, 0xab1c5ed5U,
    0xd807aa98U, 0x12835b01U, 0x243185beU, 0x550c7dc3U, 0x72be5d74U, 0x80deb1feU, 0x9bdc06a7U, 0xc19bf174U,
    0xe49b69c1U, 0xefbe4786U, 0x0fc19dc6U, 0x240ca1ccU, 0x2de92c6fU, 0x4a7484aaU, 0x5cb0a9dcU, 0x76f988daU,
    0x983e5152U, 0xa831c66dU, 0xb00327c8U, 0xbf597fc7U, 0xc6e00bf3U, 0xd5a79147U, 0x06ca6351U, 0x14292967U,
    0x27b70a85U, 0x2e1b2138U, 0x4d2c6dfcU, 0x53380d13U, 0x650a7354U, 0x766a0abbU, 0x81c2c92eU, 0x92722c85U,
    0xa2bfe8a1U, 0xa81a664bU, 0xc24b8b70U, 0xc76c51a3U, 0xd192e819U, 0xd6990624U, 0xf40e3585U, 0x106aa070U,
    0x19a4c116U, 0x1e376c08U, 0x2748774cU, 0x34b0bcb5U, 0x391c0cb3U, 0x4ed8aa4aU, 0x5b9cca4fU, 0x682e6ff3U,
    0x748f82eeU, 0x78a5636fU, 0x84c87814U, 0x8cc70208U, 0x90befffaU, 0xa4506cebU, 0xbef9a3f7U, 0xc67178f2U,
};

#define ROTR32(x, n) (((x) >> (n)) | ((x) << (32 - (n))))

static void sha256_block(uint32_t *h, const uint8_t *p) {
    uint32_t w[64];
    for (int t = 0; t < 16; t++) w[t] = load_be32(p + 4 * t);
    for (int t = 16; t < 64; t++) {
        uint32_t s0 = ROTR32(w[t - 15], 7) ^ ROTR32(w[t - 15], 18) ^ (w[t - 15] >> 3);
        uint32_t s1 = ROTR32(w[t - 2], 17) ^ ROTR32(w[t - 2], 19) ^ (w[t - 2] >> 10);
        w[t] = s1 + w[t - 7] + s0 + w[t - 16];
    }
    uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], hh = h[7];
    for (int t = 0; t < 64; t++) {
        uint32_t t1 = hh + (ROTR32(e, 6) ^ ROTR32(e, 11) ^ ROTR32(e, 25)) + (g ^ (e & (f ^ g))) + SHA256_K[t] + w[t];
        uint32_t t2 = (ROTR32(a, 2) ^ ROTR32(a, 13) ^ ROTR32(a, 22)) + (b ^ ((a ^ b) & (b ^ c)));
        hh = g; g = f; f = e; e = d + t1; d = c; c = b; b = a; a = t1 + t2;
    }
    h[0] += a; h[1] += b; h[2] += c; h[3] += d; h[4] += e; h[5] += f; h[6] += g; h[7] += hh;
}

/* the first 8 bytes of the SHA-256 of ``len`` < 120 bytes, big-endian */
static uint64_t sha256_head64(const uint8_t *data, size_t len) {
    uint32_t h[8] = {0x6a09e667U, 0xbb67ae85U, 0x3c6ef372U, 0xa54ff53aU,
                     0x510e527fU, 0x9b05688cU, 0x1f83d9abU, 0x5be0cd19U};
    uint8_t last[128];
    size_t total = len + 1 + 8 <= 64 ? 64 : 128;
    memcpy(last, data, len);
    last[len] = 0x80;
    memset(last + len + 1, 0, total - 8 - (len + 1));
    uint64_t bits = (uint64_t)len * 8;
    for (int b = 0; b < 8; b++) last[total - 1 - b] = (uint8_t)(bits >> (8 * b));
    sha256_block(h, last);
    if (total == 128) sha256_block(h, last + 64);
    return (uint64_t)h[0] << 32 | h[1];
}

static PyObject *game_seed_fast(PyObject *m, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "game_seed(seed, deal)");
        return NULL;
    }
    long long v[2];
    for (int i = 0; i < 2; i++) {
        int overflow = 0;
        if (!PyLong_CheckExact(args[i])) Py_RETURN_NONE;  /* bool, an int subclass, not an int: the reference */
        v[i] = PyLong_AsLongLongAndOverflow(args[i], &overflow);
        if (overflow) Py_RETURN_NONE;
        if (v[i] == -1 && PyErr_Occurred()) return NULL;
    }
    char text[80];  /* "uno-arena:{seed}:{deal}", written by decimal (snprintf: 1,700 instructions a game) */
    size_t len = 10;
    memcpy(text, "uno-arena:", len);
    len += decimal(text + len, v[0]);
    text[len++] = ':';
    len += decimal(text + len, v[1]);
    return PyLong_FromUnsignedLongLong(sha256_head64((const uint8_t *)text, len) >> 1);
}

/* ---- the common match: engine.match._play_games in C ----
 * ``play_games(game_type, rules, seats, seed, deals, duplicate, configs, names, book, timings, on_game,
 * scoring)`` plays a match's games as engine.match._play_games, its reference, does, for compiled
 * games and no live hook (engine.match.play_match chooses; tests/engine/test_compiled.py compares
 * the two): per deal the game's seed (game_seed, the Python reference beyond 64 bits), per rotation
 * the seating (engine.seating.seat_bots when duplicate), ``begin_game`` through engine.match.
 * _begin_game for a seat that has one, the replay's game head (engine.replay.game_head), the game
 * (``game_type``: engine.compiled.CompiledGame or a subclass) played by the turn loop (turn_loop)
 * with one engine.compiled.Referee a match for the rare paths, its ranks, the totals, wins and
 * rounds, ``on_game``; then the match ranks (engine.match.rank_bots). Returns ``(records,
 * decision_ms, totals, wins, ranks, rounds)`` as _play_games. What it calls back: set_match. */
static PyObject *M_REFEREE_TYPE, *M_AGENT_SEAT, *M_AGENT_FAULT, *M_SEAT_FAULT,
    *M_GAME_SEED, *M_SEAT_BOTS, *M_BEGIN_GAME, *M_COLLECT;
static long long M_GC_EVERY;
static PyObject *MS_index, *MS_deal, *MS_rotation, *MS_seed, *MS_seats, *MS_names, *MS_forfeited, *MS_begin_game,
    *MS_lazy_observation, *MS_game, *MS_head, *MS_charge, *MS_timed, *MS_forfeits, *MS_winner, *MS_book, *MS_timings;

static PyObject *set_match(PyObject *m, PyObject *args) {
    PyObject *v[9];
    long long gc_every;
    if (!PyArg_ParseTuple(args, "O!O!OOOOOOOL:set_match", &PyType_Type, &v[0], &PyType_Type, &v[1], &v[2], &v[3],
                          &v[4], &v[5], &v[6], &v[7], &v[8], &gc_every))
        return NULL;
    if (gc_every < 1) {
        PyErr_SetString(PyExc_ValueError, "set_match: gc_every must be positive");
        return NULL;
    }
    M_GC_EVERY = gc_every;
    PyObject **slot[9] = {&M_REFEREE_TYPE, &M_AGENT_SEAT, &M_AGENT_DECIDE, &M_AGENT_FAULT, &M_SEAT_FAULT,
                          &M_GAME_SEED, &M_SEAT_BOTS, &M_BEGIN_GAME, &M_COLLECT};
    for (int i = 0; i < 9; i++) Py_XSETREF(*slot[i], Py_NewRef(v[i]));
    Py_XSETREF(M_DECIDE_CODE, PyFunction_Check(v[2]) ? Py_NewRef(PyFunction_GET_CODE(v[2])) : NULL);
    if (!MS_index) {
        PyObject **s[17] = {&MS_index, &MS_deal, &MS_rotation, &MS_seed, &MS_seats, &MS_names, &MS_forfeited,
                            &MS_begin_game, &MS_lazy_observation, &MS_game, &MS_head, &MS_charge, &MS_timed,
                            &MS_forfeits, &MS_winner, &MS_book, &MS_timings};
        static const char *text[17] = {"index", "deal", "rotation", "seed", "seats", "names", "forfeited",
                                       "begin_game", "lazy_observation", "game", "head", "charge", "timed",
                                       "forfeits", "winner", "book", "timings"};
        for (int i = 0; i < 17; i++) if (!(*s[i] = PyUnicode_InternFromString(text[i]))) return NULL;
    }
    Py_RETURN_NONE;
}

/* whether dict ``d``'s keys are all exact str: a lookup in it then runs no Python code (no key's __eq__) */
static int str_keys_only(PyObject *d) {
#if PY_VERSION_HEX >= 0x030B0000 && PY_VERSION_HEX < 0x030D0000
    /* the keys table's kind, where the layout was found as mirrored at import (obs_init) */
    if (OBS_IN_PLACE) return ((ObsKeys *)((PyDictObject *)d)->ma_keys)->dk_kind != 0;  /* not DICT_KEYS_GENERAL */
#endif
    Py_ssize_t pos = 0;
    PyObject *key, *value;
    while (PyDict_Next(d, &pos, &key, &value)) if (!PyUnicode_CheckExact(key)) return 0;
    return 1;
}

/* an engine.match.AgentSeat as it is (its class's decide, none of its own); -1 on error.
 * Once the seat's dict is made it runs no Python code, so what it answers still holds when the turn loop
 * reads the agent (memo_attr) right after: a seat whose dict has a key other than a str (whose __eq__ a
 * lookup would call) is not plain, nor a class whose attribute lookup or decide (its entry, its code)
 * changed: the loop then calls decide as the pure referee does. */
static int plain_agent(PyObject *seat) {
    PyTypeObject *tp = Py_TYPE(seat);
    if ((PyObject *)tp != M_AGENT_SEAT) return 0;
    PyObject *own = PyObject_GenericGetDict(seat, NULL);  /* vars(seat), made first: making it may run code */
    if (!own) return -1;
    int plain = Py_TYPE(seat) == tp && tp->tp_getattro == PyObject_GenericGetAttr
        && decide_code_kept() && _PyType_Lookup(tp, S_decide) == M_AGENT_DECIDE && PyDict_CheckExact(own)
        && str_keys_only(own);
    int has = plain ? PyDict_Contains(own, S_decide) : 0;
    Py_DECREF(own);
    return has < 0 ? -1 : plain && !has;
}

typedef struct {
    PyObject *game_type, *rules, *seats, *configs, *names, *book, *forfeits, *on_game, *total_games, *charge, *timed;
    PyObject *records, *decision_ms;
    Py_ssize_t n;
    int duplicate;
    long long decisions, rounds, totals[MAX_SEATS], wins[MAX_SEATS];
} MatchRun;

/* one game of the match: _play_games's body for deal ``deal`` (``deal_obj``), rotation ``rotation`` */
static int match_game(MatchRun *st, PyObject *referee, PyObject *deal_obj, PyObject *seed_d, Py_ssize_t rotation) {
    Py_ssize_t n = st->n;
    int bots[MAX_SEATS], rc = -1;
    PyObject *index = NULL, *rot = NULL, *seat_list = NULL, *seat_bot = NULL, *forfeited = NULL, *seat_names = NULL,
             *head = NULL, *game = NULL, *times = NULL, *lazy = NULL, *r = NULL,
             *ranks = NULL, *record = NULL;
    if (PyList_GET_SIZE(st->names) != n || PyList_GET_SIZE(st->forfeits) != n) {  /* read by index below */
        PyErr_SetString(PyExc_ValueError, "play_games: the names or the forfeits changed length");
        return -1;
    }
    if (!(index = PyLong_FromSsize_t(PyList_GET_SIZE(st->records))) || !(rot = PyLong_FromSsize_t(rotation))) goto done;
    /* the bot sitting at each seat (engine.seating) */
    if (st->duplicate) {
        PyObject *nn = PyLong_FromSsize_t(n);
        PyObject *a[4] = {nn, deal_obj, rot, Py_True};
        seat_bot = nn ? PyObject_Vectorcall(M_SEAT_BOTS, a, 4, NULL) : NULL;
        Py_XDECREF(nn);
        if (!seat_bot) goto done;
        if (!PyList_CheckExact(seat_bot) || PyList_GET_SIZE(seat_bot) != n) {
            PyErr_SetString(PyExc_ValueError, "seat_bots must give a list of one bot per seat");
            goto done;
        }
        for (Py_ssize_t s = 0; s < n; s++) {
            long b = PyLong_AsLong(PyList_GET_ITEM(seat_bot, s));
            if (b == -1 && PyErr_Occurred()) goto done;
            if (b < 0 || b >= n) {
                PyErr_SetString(PyExc_IndexError, "a bot index out of range");
                goto done;
            }
            bots[s] = (int)b;
        }
    } else {
        if (!(seat_bot = PyList_New(n))) goto done;
        for (Py_ssize_t s = 0; s < n; s++) {
            bots[s] = (int)s;
            PyList_SET_ITEM(seat_bot, s, small_int(s));
        }
    }
    if (!(seat_list = PySequence_List(st->seats))) goto done;
    if (PyList_GET_SIZE(seat_list) != n) {
        PyErr_SetString(PyExc_ValueError, "the seats changed during the match");
        goto done;
    }
    for (Py_ssize_t s = 0; s < n; s++) {  /* begin_game for the seats that have it (most have none) */
        PyObject *seat = PyList_GET_ITEM(seat_list, bots[s]), *begin;
        if (LOOKUP_ATTR(seat, MS_begin_game, &begin) < 0) goto done;
        if (begin == NULL) continue;
        int has = begin != Py_None;
        Py_DECREF(begin);
        if (!has) continue;
        PyObject *a[4] = {seat, SMALL_INT[bots[s]], index, st->book};
        PyObject *x = PyObject_Vectorcall(M_BEGIN_GAME, a, 4, NULL);
        if (!x) goto done;
        Py_DECREF(x);
    }
    if (!(forfeited = PyList_New(0)) || !(seat_names = PyList_New(n))) goto done;
    for (Py_ssize_t s = 0; s < n; s++) {
        PyList_SET_ITEM(seat_names, s, Py_NewRef(PyList_GET_ITEM(st->names, bots[s])));
        if (PyList_GET_ITEM(st->forfeits, bots[s]) != Py_None && PyList_Append(forfeited, SMALL_INT[s]) < 0) goto done;
    }
    /* engine.replay.game_head */
    if (!(head = NEW_DICT(7)) || PyDict_SetItem(head, MS_index, index) < 0
        || PyDict_SetItem(head, MS_deal, deal_obj) < 0
        || PyDict_SetItem(head, MS_rotation, rot) < 0 || PyDict_SetItem(head, MS_seed, seed_d) < 0
        || PyDict_SetItem(head, MS_seats, seat_bot) < 0 || PyDict_SetItem(head, MS_names, seat_names) < 0
        || PyDict_SetItem(head, MS_forfeited, forfeited) < 0)
        goto done;
    {
        PyObject *a[2] = {st->rules, seed_d};
        if (!(game = PyObject_Vectorcall(st->game_type, a, 2, NULL))) goto done;
    }
    if (!PyObject_TypeCheck(game, &CoreType)) {
        PyErr_SetString(PyExc_TypeError, "play_games: game_type made no compiled game");
        goto done;
    }
    if (!(times = PyList_New(0)) || PyList_Append(st->decision_ms, times) < 0) goto done;
    /* per bot: snapshots (engine.match._lazy) */
    if (!(lazy = PyList_New(n))) goto done;
    for (Py_ssize_t b = 0; b < n; b++) {
        PyObject *v;
        if (LOOKUP_ATTR(PyList_GET_ITEM(seat_list, b), MS_lazy_observation, &v) < 0) goto done;
        PyList_SET_ITEM(lazy, b, Py_NewRef(v == Py_True ? Py_True : Py_False));
        Py_XDECREF(v);
    }
    if (PyObject_SetAttr(referee, MS_game, game) < 0 || PyObject_SetAttr(referee, MS_head, head) < 0) goto done;
    if (!(r = turn_loop((Core *)game, seat_list, lazy, seat_bot, st->configs, st->forfeits, times, Py_None, Py_None,
                        st->decisions, st->charge, st->timed, M_SEAT_FAULT, M_AGENT_FAULT, M_COLLECT,
                        M_GC_EVERY)))
        goto done;
    st->decisions = PyLong_AsLongLong(r);
    if (st->decisions == -1 && PyErr_Occurred()) goto done;
    {
        Core *g = (Core *)game;
        long rk[MAX_SEATS];
        long long r64[MAX_SEATS];
        int firsts = 0, first = 0;
        compute_ranks(g, rk);
        for (Py_ssize_t s = 0; s < n; s++) {
            r64[s] = rk[s];
            st->totals[bots[s]] += g->scores[s];
            if (rk[s] == 1) { firsts++; first = (int)s; }
        }
        if (firsts == 1) st->wins[bots[first]]++;  /* a game is won only by a sole first place (RULES.md section 7) */
        st->rounds += g->round;
        if (!(ranks = int_list(r64, (int)n))) goto done;
    }
    if (!(record = PyTuple_Pack(3, head, game, ranks)) || PyList_Append(st->records, record) < 0) goto done;
    if (st->on_game != Py_None) {
        PyObject *done_games = PyLong_FromSsize_t(PyList_GET_SIZE(st->records));
        PyObject *a[2] = {done_games, st->total_games};
        PyObject *x = done_games ? PyObject_Vectorcall(st->on_game, a, 2, NULL) : NULL;
        Py_XDECREF(done_games);
        if (!x) goto done;
        Py_DECREF(x);
    }
    rc = 0;
done:
    Py_XDECREF(index); Py_XDECREF(rot); Py_XDECREF(seat_list); Py_XDECREF(seat_bot); Py_XDECREF(forfeited);
    Py_XDECREF(seat_names); Py_XDECREF(head); Py_XDECREF(game); Py_XDECREF(times); Py_XDECREF(lazy);
    Py_XDECREF(r); Py_XDECREF(ranks); Py_XDECREF(record);
    return rc;
}

static PyObject *play_games(PyObject *m, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 12) {
        PyErr_SetString(PyExc_TypeError, "play_games(game_type, rules, seats, seed, deals, duplicate, configs, names, "
                                         "book, timings, on_game, scoring)");
        return NULL;
    }
    args++;  /* the rest as _play_games's arguments */
    if (!M_REFEREE_TYPE) {
        PyErr_SetString(PyExc_RuntimeError, "engine._core.play_games: set_match was not called");
        return NULL;
    }
    MatchRun st = {.game_type = args[-1], .rules = args[0], .seats = args[1], .configs = args[5], .names = args[6],
                   .book = args[7], .on_game = args[9]};
    PyObject *seed = args[2], *timings = args[8], *result = NULL, *referee = NULL, *totals = NULL, *wins = NULL,
             *ranks = NULL;
    long long deals = PyLong_AsLongLong(args[3]);
    if (deals == -1 && PyErr_Occurred()) return NULL;
    if ((st.duplicate = PyObject_IsTrue(args[4])) < 0) return NULL;
    int winner = PyObject_RichCompareBool(args[10], MS_winner, Py_EQ);
    if (winner < 0) return NULL;
    if ((st.n = PySequence_Size(st.seats)) < 0) return NULL;
    if (st.n < 1 || st.n > MAX_SEATS || !PyList_CheckExact(st.configs) || PyList_GET_SIZE(st.configs) != st.n
        || !PyList_CheckExact(st.names) || PyList_GET_SIZE(st.names) != st.n) {
        PyErr_SetString(PyExc_ValueError, "play_games: one configuration and one name per seat, at most 10 seats");
        return NULL;
    }
    if (!(st.forfeits = PyObject_GetAttr(st.book, MS_forfeits))) return NULL;
    if (!PyList_CheckExact(st.forfeits) || PyList_GET_SIZE(st.forfeits) != st.n) {
        PyErr_SetString(PyExc_ValueError, "play_games: the book must have one forfeit entry per seat");
        goto done;
    }
    Py_ssize_t rotations = st.duplicate ? st.n : 1;
    /* made without its __init__ (a Python frame): its slots set here */
    if (!(referee = ((PyTypeObject *)M_REFEREE_TYPE)->tp_alloc((PyTypeObject *)M_REFEREE_TYPE, 0))
        || PyObject_SetAttr(referee, MS_book, st.book) < 0 || PyObject_SetAttr(referee, MS_timings, timings) < 0)
        goto done;
    if (!(st.charge = PyObject_GetAttr(referee, MS_charge)) || !(st.timed = PyObject_GetAttr(referee, MS_timed))
        || !(st.total_games = PyLong_FromLongLong(deals * rotations)) || !(st.records = PyList_New(0))
        || !(st.decision_ms = PyList_New(0)))
        goto done;
    for (long long deal = 0; deal < deals; deal++) {
        PyObject *deal_obj = PyLong_FromLongLong(deal);
        if (!deal_obj) goto done;
        PyObject *a[2] = {seed, deal_obj};
        PyObject *seed_d = game_seed_fast(m, a, 2);
        if (seed_d == Py_None) {
            Py_DECREF(seed_d);
            seed_d = PyObject_Vectorcall(M_GAME_SEED, a, 2, NULL);
        }
        int failed = seed_d == NULL;
        for (Py_ssize_t rotation = 0; !failed && rotation < rotations; rotation++)
            failed = match_game(&st, referee, deal_obj, seed_d, rotation) < 0;
        Py_DECREF(deal_obj);
        Py_XDECREF(seed_d);
        if (failed) goto done;
    }
    /* engine.match.rank_bots: by total points (higher first for winner scoring), then wins; forfeits last */
    if (PyList_GET_SIZE(st.forfeits) != st.n) {
        PyErr_SetString(PyExc_ValueError, "play_games: the forfeits changed length");
        goto done;
    }
    {
        long long key[MAX_SEATS][3], rk[MAX_SEATS];
        for (Py_ssize_t b = 0; b < st.n; b++) {
            int out = PyList_GET_ITEM(st.forfeits, b) != Py_None;
            key[b][0] = out;
            key[b][1] = out ? 0 : (winner ? -st.totals[b] : st.totals[b]);
            key[b][2] = out ? 0 : -st.wins[b];
        }
        for (Py_ssize_t b = 0; b < st.n; b++) {
            rk[b] = 1;
            for (Py_ssize_t o = 0; o < st.n; o++)
                rk[b] += key[o][0] < key[b][0] || (key[o][0] == key[b][0] && (key[o][1] < key[b][1]
                         || (key[o][1] == key[b][1] && key[o][2] < key[b][2])));
        }
        if (!(totals = int_list(st.totals, (int)st.n)) || !(wins = int_list(st.wins, (int)st.n))
            || !(ranks = int_list(rk, (int)st.n)))
            goto done;
    }
    PyObject *rounds = PyLong_FromLongLong(st.rounds);
    if (rounds) result = PyTuple_Pack(6, st.records, st.decision_ms, totals, wins, ranks, rounds);
    Py_XDECREF(rounds);
done:
    Py_XDECREF(st.forfeits); Py_XDECREF(referee); Py_XDECREF(st.charge); Py_XDECREF(st.timed);
    Py_XDECREF(st.total_games); Py_XDECREF(st.records); Py_XDECREF(st.decision_ms); Py_XDECREF(totals);
    Py_XDECREF(wins); Py_XDECREF(ranks);
    return result;
}

/* ---- the cyclic GC pause: engine.match._cyclic_gc_paused when the core is built ----
 * ``GcPause()`` is engine.match._CyclicGcPaused (its reference) as a C context manager: the first
 * of the matches running in the process pauses the collector, the last restores it as it found
 * it. The count needs no lock: the GIL is held throughout each method, which runs no Python
 * code. Entering and leaving it is two C calls, not two Python frames and a lock's. */
static Py_ssize_t GC_USERS;
static int GC_WAS_ENABLED;

static PyObject *gc_pause_enter(PyObject *self, PyObject *unused) {
    if (GC_USERS++ == 0) GC_WAS_ENABLED = PyGC_Disable();
    Py_RETURN_NONE;
}

static PyObject *gc_pause_exit(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (GC_USERS > 0 && --GC_USERS == 0 && GC_WAS_ENABLED) PyGC_Enable();
    Py_RETURN_NONE;
}

static PyMethodDef gc_pause_methods[] = {
    {"__enter__", gc_pause_enter, METH_NOARGS, "pause the cyclic GC (the first match running)"},
    {"__exit__", (PyCFunction)(void (*)(void))gc_pause_exit, METH_FASTCALL,
     "restore the cyclic GC as the first match found it (the last match running)"},
    {NULL}
};

static PyTypeObject GcPauseType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "engine._core.GcPause",
    .tp_basicsize = sizeof(PyObject),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "engine.match._CyclicGcPaused in C: ``with GcPause():`` pauses the cyclic GC while any match runs.",
    .tp_new = PyType_GenericNew,
    .tp_methods = gc_pause_methods,
};

/* ``frozen(cls, fields)``: engine.match._frozen (its reference) in C, ``object.__new__(cls)`` with
 * ``fields`` written to its ``__dict__`` in their order, without the Python frame */
static PyObject *frozen_new(PyObject *m, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 2 || !PyType_Check(args[0]) || !PyDict_CheckExact(args[1])) {
        PyErr_SetString(PyExc_TypeError, "frozen(cls, fields): a class and a dict");
        return NULL;
    }
    PyObject *none = PyTuple_New(0);
    PyObject *obj = none ? PyBaseObject_Type.tp_new((PyTypeObject *)args[0], none, NULL) : NULL;
    Py_XDECREF(none);
    if (!obj) return NULL;
    PyObject *own = PyObject_GenericGetDict(obj, NULL);  /* obj.__dict__ */
    int rc = own ? PyDict_Update(own, args[1]) : -1;
    Py_XDECREF(own);
    if (rc < 0) {
        Py_DECREF(obj);
        return NULL;
    }
    return obj;
}

static PyMethodDef module_methods[] = {
    {"set_illegal_hook", set_hook, METH_O, "hook(game, what, value): raises IllegalAction with the message"},
    {"set_rules_type", set_rules_type, METH_O, "the class a game's rules must be an instance of (engine.rules.Rules)"},
    {"game_seed", (PyCFunction)(void (*)(void))game_seed_fast, METH_FASTCALL,
     "game_seed(seed, deal): engine.match.game_seed for two ints of 64 bits, else None"},
    {"set_match", set_match, METH_VARARGS,
     "set_match(referee_type, agent_seat, agent_decide, agent_fault, seat_fault, game_seed, seat_bots, "
     "begin_game, collect, gc_every): what play_games calls (engine.compiled.core_match)"},
    {"play_games", (PyCFunction)(void (*)(void))play_games, METH_FASTCALL,
     "play_games(game_type, rules, seats, seed, deals, duplicate, configs, names, book, timings, on_game, scoring): "
     "engine.match._play_games for compiled games without a live hook"},
    {"frozen", (PyCFunction)(void (*)(void))frozen_new, METH_FASTCALL,
     "frozen(cls, fields): engine.match._frozen, object.__new__(cls) with fields in its __dict__"},
    {"stream_check", stream_check, METH_VARARGS,
     "stream_check(seed, count, below, k): a stream's first ``count`` random(), then _randbelow(below), "
     "sample(range(108), k), random(), as random.Random(seed) gives them (tests)"},
    {NULL}
};

static struct PyModuleDef core_module = {
    PyModuleDef_HEAD_INIT, "engine._core", "The UNO rules of engine.game in C (docs/engine.md, 'Compiled core').",
    -1, module_methods,
};

static PyObject *intern(const char *text) { return PyUnicode_InternFromString(text); }

PyMODINIT_FUNC PyInit__core(void) {
    {
        static Stream base;
        mt_init_genrand(&base, 19650218U);
        memcpy(MT_BASE, base.mt, sizeof MT_BASE);
    }
    /* the card tables, as engine.cards builds them */
    for (int k = 0; k < 52; k++) {
        KIND_COLOR[k] = (int8_t)(k / 13);
        KIND_RANK[k] = (int8_t)(k % 13);
        KIND_POINTS[k] = (int8_t)(k % 13 < 10 ? k % 13 : 20);
    }
    KIND_COLOR[WILD_KIND] = KIND_COLOR[WD4_KIND] = -1;
    KIND_RANK[WILD_KIND] = WILD;
    KIND_RANK[WD4_KIND] = WILD_DRAW_FOUR;
    KIND_POINTS[WILD_KIND] = KIND_POINTS[WD4_KIND] = 50;
    int c = 0;
    for (int color = 0; color < 4; color++) {
        DECK[c++] = (uint8_t)(color * 13);
        for (int rank = 1; rank < 13; rank++) {
            DECK[c++] = (uint8_t)(color * 13 + rank);
            DECK[c++] = (uint8_t)(color * 13 + rank);
        }
    }
    for (int i = 0; i < 4; i++) DECK[c++] = WILD_KIND;
    for (int i = 0; i < 4; i++) DECK[c++] = WD4_KIND;
    for (int i = 0; i < DECK_SIZE; i++) IDENTITY[i] = (uint8_t)i;
    for (int color = -1; color < 4; color++) {
        for (int tr = 0; tr < NUM_RANKS; tr++) {
            int m = 0;
            for (int k = 0; k < WILD_KIND; k++) {
                if (KIND_COLOR[k] != color && KIND_RANK[k] != tr) continue;
                if (m == MAX_MATCH) {
                    PyErr_SetString(PyExc_RuntimeError, "engine._core: more than MAX_MATCH kinds match a card");
                    return NULL;
                }
                MATCH_KINDS[color + 1][tr][m++] = (uint8_t)k;
            }
            MATCH_N[color + 1][tr] = (uint8_t)m;
        }
    }

    for (int i = 0; i < 256; i++) if (!(SMALL_INT[i] = PyLong_FromLong(i))) return NULL;
    if (!(KIND_BY_CODE = PyDict_New())) return NULL;
    for (int k = 0; k < NUM_KINDS; k++) {
        if (!(CODE[k] = intern(CODE_TEXT[k]))) return NULL;
        if (PyDict_SetItem(KIND_BY_CODE, CODE[k], SMALL_INT[k]) < 0) return NULL;
    }
    for (int i = 0; i < 4; i++) if (!(COLOR_STR[i] = intern(COLOR_TEXT[i]))) return NULL;
    for (int i = 0; i < N_DECISIONS; i++) if (!(DECISION_STR[i] = intern(DECISION_NAMES[i]))) return NULL;
    for (int i = 0; i < N_REASONS; i++) if (!(REASON_STR[i] = intern(REASON_NAMES[i]))) return NULL;
#define S(name) if (!(S_##name = intern(#name))) return NULL;
    S(e) S(seat) S(card) S(color) S(jump_in) S(uno) S(cards) S(reason) S(direction) S(target) S(honest) S(type)
    S(play) S(swap) S(turn) S(uno_caught) S(draw) S(reshuffle) S(skip) S(pending) S(challenge) S(pass)
    S(pass_hands) S(since) S(decision) S(action) S(fault) S(kind) S(strikes) S(forfeit) S(players) S(hand)
    S(top_card) S(current) S(hand_sizes) S(scores) S(draw_pile) S(discard) S(pending_draw) S(round) S(dealer)
    S(legal_actions) S(random) S(randrange) S(sample) S(round_start) S(hands) S(returned) S(top) S(round_end)
    S(winner) S(points) S(game_end) S(ranks) S(out) S(max_turns) S(accept) S(decide) S(agent)
    S(last_decision_seconds) S(__call__)
#undef S
    /* the action dicts of engine.game.ACTIONS, without and with "uno" */
    static const char *SIMPLE[4] = {"draw", "pass", "accept", "challenge"};
    for (int uno = 0; uno < 2; uno++) {
        for (int id = 0; id < NUM_ACTIONS; id++) {
            PyObject *d;
            if (id < A_PLAY0) {
                d = make_dict(1, S_type, intern(SIMPLE[id]));
            } else if (id < A_SWAP0) {
                int k = id_kind(id);
                d = make_dict(2, S_type, Py_NewRef(S_play), S_card, Py_NewRef(CODE[k]));
                if (d && KIND_COLOR[k] < 0 && PyDict_SetItem(d, S_color, COLOR_STR[id_color(id)]) < 0) return NULL;
                if (d && uno && PyDict_SetItem(d, S_uno, Py_True) < 0) return NULL;
            } else if (id < A_COLOR0) {
                d = make_dict(2, S_type, Py_NewRef(S_swap), S_target, small_int(id - A_SWAP0));
            } else {
                d = make_dict(2, S_type, Py_NewRef(S_color), S_color, Py_NewRef(COLOR_STR[id - A_COLOR0]));
            }
            if (!d) return NULL;
            TEMPLATE[uno][id] = d;
            if (!(VIEW[uno][id] = PyDictProxy_New(d))) return NULL;
        }
    }

    PyObject *keys[N_KEYS] = {S_seat, S_players, S_hand, S_top_card, S_color, S_direction, S_current, S_hand_sizes,
                              S_uno, S_scores, S_draw_pile, S_discard, S_pending_draw, S_round, S_dealer,
                              S_decision, S_legal_actions};
    if (!(SNAP_KEYS = PyTuple_New(N_KEYS)) || !(SNAP_INDEX = PyDict_New())) return NULL;
    for (int i = 0; i < N_KEYS; i++) {
        PyTuple_SET_ITEM(SNAP_KEYS, i, Py_NewRef(keys[i]));
        if (PyDict_SetItem(SNAP_INDEX, keys[i], SMALL_INT[i]) < 0) return NULL;
    }
    for (int i = 0; i < N_OBS_KEYS; i++) OBS_KEYS[i] = keys[i];
    if (obs_init() < 0) return NULL;
    if ((OBS_RECYCLE = OBS_IN_PLACE ? recycle_check() : 0) < 0) return NULL;
    if (PyType_Ready(&CoreType) < 0 || PyType_Ready(&SnapType) < 0 || PyType_Ready(&ObservationsType) < 0 ||
        PyType_Ready(&AECBaseType) < 0 || PyType_Ready(&AgentIterType) < 0 || PyType_Ready(&GcPauseType) < 0)
        return NULL;
    if (!(ENV_S_observation = intern("observation")) || !(ENV_S_action_mask = intern("action_mask")) ||
        !(ENV_S_py_last = intern("_py_last")) || !(ENV_S_py_step = intern("_py_step")) ||
        !(ENV_S_py_agent_iter = intern("_py_agent_iter")) || !(ENV_S_game_over = intern("_game_over")) ||
        !(ENV_ZERO = PyFloat_FromDouble(0.0)) || !(ENV_S_legal_action_ids = intern("legal_action_ids")) ||
        !(ENV_NO_IDS = PyTuple_New(0)) || env_init() < 0)
        return NULL;
    PyObject *m = PyModule_Create(&core_module);
    if (!m) return NULL;
    Py_INCREF(&CoreType);
    if (PyModule_AddObject(m, "Core", (PyObject *)&CoreType) < 0) return NULL;
    Py_INCREF(&SnapType);
    if (PyModule_AddObject(m, "Snapshot", (PyObject *)&SnapType) < 0) return NULL;
    if (PyModule_AddObject(m, "Observations", Py_NewRef(&ObservationsType)) < 0) return NULL;
    if (PyModule_AddObject(m, "AECBase", Py_NewRef(&AECBaseType)) < 0) return NULL;
    if (PyModule_AddObject(m, "GcPause", Py_NewRef(&GcPauseType)) < 0) return NULL;
    if (PyModule_AddObject(m, "SNAPSHOT_KEYS", Py_NewRef(SNAP_KEYS)) < 0) return NULL;
    PyModule_AddIntConstant(m, "NUM_ACTIONS", NUM_ACTIONS);
    PyModule_AddIntConstant(m, "OBSERVATION_IN_PLACE", OBS_IN_PLACE);
    PyModule_AddIntConstant(m, "OBSERVATION_RECYCLED", OBS_RECYCLE);
    PyModule_AddStringConstant(m, "SOURCE_SHA256", CORE_SOURCE_SHA256);
    return m;
}
