#!/usr/bin/env python3
"""
Independent reference for fairdeal's blind-v1 proofs, written from docs/dealer-blind.md (the
equations) before the TypeScript code, on libsodium's ristretto255 (through ctypes) and Python's
hashlib. It writes the known-answer vectors test/fixtures/blind-*.json that the TypeScript code
must reproduce byte for byte.

  /usr/bin/python3 scripts/blind-vectors/reference.py test/fixtures

Needs libsodium >= 1.0.18 (Debian: libsodium23, pulled in by python3-nacl). Nothing here is used at run time.
"""
import hashlib
import json
import sys
import ctypes
import ctypes.util

_so = ctypes.CDLL(ctypes.util.find_library('sodium'))
assert _so.sodium_init() >= 0


class _Sodium:
    """The few libsodium ristretto255 calls this script needs, through ctypes."""

    @staticmethod
    def _call(fn, out_len, *args):
        out = ctypes.create_string_buffer(out_len)
        rc = fn(out, *args)
        if rc not in (0, None): raise ValueError('libsodium refused: %s' % fn.__name__)
        return out.raw

    def crypto_core_ristretto255_add(self, p, q): return self._call(_so.crypto_core_ristretto255_add, 32, p, q)

    def crypto_scalarmult_ristretto255(self, n, p): return self._call(_so.crypto_scalarmult_ristretto255, 32, n, p)

    def crypto_scalarmult_ristretto255_base(self, n): return self._call(_so.crypto_scalarmult_ristretto255_base, 32, n)

    def crypto_core_ristretto255_from_hash(self, r): return self._call(_so.crypto_core_ristretto255_from_hash, 32, r)


nb = _Sodium()

L = 2**252 + 27742317777372353535851937790883648493
ZERO = bytes(32)


# ---- group ---------------------------------------------------------------------------------
def enc_scalar(x): return (x % L).to_bytes(32, 'little')


def add(p, q):
    if p == ZERO: return q
    if q == ZERO: return p
    if p == neg(q): return ZERO
    return nb.crypto_core_ristretto255_add(p, q)


def neg(p):
    # -P = (L-1)·P
    return mul(L - 1, p)


def sub(p, q): return add(p, neg(q))


def mul(x, p):
    x %= L
    if x == 0 or p == ZERO: return ZERO
    return nb.crypto_scalarmult_ristretto255(enc_scalar(x), p)


def base(x):
    x %= L
    if x == 0: return ZERO
    return nb.crypto_scalarmult_ristretto255_base(enc_scalar(x))


def msm(scalars, points):
    acc = ZERO
    for s, p in zip(scalars, points): acc = add(acc, mul(s, p))
    return acc


# RFC 9380 expand_message_xmd with SHA-512, then RFC 9496 one-way map (libsodium from_hash).
def expand_xmd(msg, dst, n):
    b_in = 128; h_len = 64
    ell = -(-n // h_len)
    dst_prime = dst + bytes([len(dst)])
    z_pad = bytes(b_in)
    b0 = hashlib.sha512(z_pad + msg + n.to_bytes(2, 'big') + b'\x00' + dst_prime).digest()
    b = [hashlib.sha512(b0 + b'\x01' + dst_prime).digest()]
    for i in range(2, ell + 1):
        b.append(hashlib.sha512(bytes(x ^ y for x, y in zip(b0, b[-1])) + bytes([i]) + dst_prime).digest())
    return b''.join(b)[:n]


def hash_to_group(msg, dst): return nb.crypto_core_ristretto255_from_hash(expand_xmd(msg, dst, 64))


def card_point(code): return hash_to_group(code.encode(), b'fairdeal/blind-v1/card')


def generator(name): return hash_to_group(name.encode(), b'fairdeal/blind-v1/generator')


# ---- deterministic randomness (vectors only) -----------------------------------------------
class Rng:
    def __init__(self, seed): self.seed = seed; self.k = 0; self.buf = b''

    def take(self, n):
        while len(self.buf) < n:
            self.buf += hashlib.sha512(self.seed + self.k.to_bytes(4, 'big')).digest(); self.k += 1
        out, self.buf = self.buf[:n], self.buf[n:]
        return out

    def scalar(self):
        while True:
            x = int.from_bytes(self.take(64), 'little') % L
            if x != 0: return x

    def below(self, n):
        limit = 2**32 - (2**32 % n)
        while True:
            x = int.from_bytes(self.take(4), 'big')
            if x < limit: return x % n

    def permutation(self, n):
        p = list(range(n))
        for i in range(n - 1, 0, -1):
            j = self.below(i + 1); p[i], p[j] = p[j], p[i]
        return p


# ---- transcript ----------------------------------------------------------------------------
def frame(b): return len(b).to_bytes(4, 'big') + b


def challenge(label, ctx, items):
    h = hashlib.sha512()
    h.update(frame(('fairdeal/blind-v1/' + label).encode()))
    for f in (ctx['table'], str(ctx['hand']), ctx['commit'], ctx['step'], ctx['prover']):
        h.update(frame(f.encode()))
    for it in items: h.update(frame(it))
    return int.from_bytes(h.digest(), 'little') % L


# ---- proofs --------------------------------------------------------------------------------
def schnorr_prove(ctx, x, rng):
    pk = base(x); k = rng.scalar(); t = base(k)
    c = challenge('key', ctx, [pk, t])
    return pk, {'c': enc_scalar(c).hex(), 's': enc_scalar(k + c * x).hex()}


def dleq_prove(ctx, x, b, rng):
    pk = base(x); d = mul(x, b); k = rng.scalar()
    c = challenge('share', ctx, [pk, b, d, base(k), mul(k, b)])
    return {'d': d.hex(), 'c': enc_scalar(c).hex(), 's': enc_scalar(k + c * x).hex()}


def ct_bytes(deck): return b''.join(a + b for a, b in deck)


def shuffle_prove(ctx, pk, deck, rng):
    n = len(deck)
    perm = rng.permutation(n)
    rr = [rng.scalar() for _ in range(n)]
    out = [(add(deck[perm[i]][0], mul(rr[i], pk)), add(deck[perm[i]][1], base(rr[i]))) for i in range(n)]
    h = generator('h'); hs = [generator(str(i)) for i in range(n)]
    r = [0] * n; C = [None] * n
    for i in range(n):
        r[perm[i]] = rng.scalar(); C[perm[i]] = add(base(r[perm[i]]), hs[i])
    stmt = [pk, ct_bytes(deck), ct_bytes(out), b''.join(C)]
    u = [challenge('shuffle-u', ctx, stmt + [i.to_bytes(4, 'big')]) for i in range(n)]
    up = [u[perm[i]] for i in range(n)]
    rh = []; Ch = []; prev = h
    for i in range(n):
        rh.append(rng.scalar()); prev = add(base(rh[-1]), mul(up[i], prev)); Ch.append(prev)
    v = [0] * n; v[n - 1] = 1
    for i in range(n - 1, 0, -1): v[i - 1] = up[i] * v[i] % L
    rbar = sum(r) % L; rhat = sum(a * b for a, b in zip(rh, v)) % L
    rtil = sum(a * b for a, b in zip(r, u)) % L; R = sum(a * b for a, b in zip(rr, up)) % L
    w1, w2, w3, w4 = rng.scalar(), rng.scalar(), rng.scalar(), rng.scalar()
    wh = [rng.scalar() for _ in range(n)]; wp = [rng.scalar() for _ in range(n)]
    t1 = base(w1); t2 = base(w2); t3 = add(base(w3), msm(wp, hs))
    t41 = add(mul(L - w4, pk), msm(wp, [c[0] for c in out]))
    t42 = add(base(L - w4), msm(wp, [c[1] for c in out]))
    th = [add(base(wh[i]), mul(wp[i], h if i == 0 else Ch[i - 1])) for i in range(n)]
    e = challenge('shuffle', ctx, stmt + [b''.join(Ch), t1, t2, t3, t41, t42, b''.join(th)])
    proof = {
        'commitments': [c.hex() for c in C], 'chain': [c.hex() for c in Ch], 'e': enc_scalar(e).hex(),
        's1': enc_scalar(w1 - e * rbar).hex(), 's2': enc_scalar(w2 - e * rhat).hex(),
        's3': enc_scalar(w3 - e * rtil).hex(), 's4': enc_scalar(w4 - e * R).hex(),
        'sHat': [enc_scalar(wh[i] - e * rh[i]).hex() for i in range(n)],
        'sPrime': [enc_scalar(wp[i] - e * up[i]).hex() for i in range(n)],
    }
    return perm, rr, out, proof


def ct_hex(deck): return [a.hex() + b.hex() for a, b in deck]


def main(outdir):
    ctx = {'table': 'kat-table', 'hand': 7, 'commit': '11' * 32, 'step': 'key:0', 'prover': '12D3KooWKATKATKATKATKATKATKATKATKATKATKATKATKATKATKAT'}
    # -- encodings: cards and generators
    cards = ['7C', 'AS', 'TC', 'T21', 'EXC']
    enc = {
        'description': 'blind-v1 encodings: card points (hash_to_ristretto255, DST fairdeal/blind-v1/card), generators (DST fairdeal/blind-v1/generator), the seeded random stream and transcript challenges',
        'cards': [{'code': c, 'point': card_point(c).hex()} for c in cards],
        'generators': [{'name': n, 'point': generator(n).hex()} for n in ['h', '0', '1', '31']],
    }
    rng = Rng(bytes.fromhex('00' * 32))
    enc['random'] = {'seed': '00' * 32, 'bytes': rng.take(80).hex(), 'scalars': [enc_scalar(rng.scalar()).hex() for _ in range(2)], 'permutation8': rng.permutation(8)}
    enc['challenge'] = {'label': 'key', 'context': ctx, 'items': ['', '00ff'], 'scalar': enc_scalar(challenge('key', ctx, [b'', bytes.fromhex('00ff')])).hex()}
    # -- schnorr
    rng = Rng(b'schnorr'.ljust(32, b'\x00'))
    keys = []
    for seat in range(3):
        x = rng.scalar(); c = dict(ctx, step='key:%d' % seat)
        pk, proof = schnorr_prove(c, x, rng)
        keys.append({'context': c, 'secret': enc_scalar(x).hex(), 'public': pk.hex(), 'proof': proof})
    schnorr = {'description': 'Schnorr proofs of knowledge of a hand key; randomness: seed "schnorr" zero-padded to 32 bytes, per seat: secret scalar then nonce scalar', 'seed': b'schnorr'.ljust(32, b'\x00').hex(), 'keys': keys}
    # -- elgamal + shuffle + shares
    rng = Rng(b'shuffle'.ljust(32, b'\x00'))
    xs = [rng.scalar() for _ in range(3)]
    pks = [base(x) for x in xs]
    joint = ZERO
    for p in pks: joint = add(joint, p)
    codes = ['7C', '8C', '9C', 'TC', 'JC', 'QC', 'KC', 'AC']
    deck = [(card_point(c), ZERO) for c in codes]
    shuffles = []
    for seat in range(3):
        c = dict(ctx, step='shuffle:%d' % seat)
        perm, rr, out, proof = shuffle_prove(c, joint, deck, rng)
        shuffles.append({'context': c, 'input': ct_hex(deck), 'permutation': perm, 'reencryption': [enc_scalar(x).hex() for x in rr], 'output': ct_hex(out), 'proof': proof})
        deck = out
    shares = []
    for pos in range(len(deck)):
        row = []
        for seat in range(3):
            c = dict(ctx, step='share:%d:%d' % (pos, seat))
            row.append({'context': c, 'seat': seat, 'share': dleq_prove(c, xs[seat], deck[pos][1], rng)})
        shares.append(row)
    opened = []
    for pos in range(len(deck)):
        m = deck[pos][0]
        for s in shares[pos]: m = sub(m, bytes.fromhex(s['share']['d']))
        opened.append(codes[[card_point(k) for k in codes].index(m)])
    shuffle = {
        'description': 'three seats: keys, joint key, the public starting deck (trivial encryptions), three Terelius-Wikstrom shuffles (Haenni et al. 2017), decryption shares with DLEQ proofs and the opened cards. Randomness: seed "shuffle" zero-padded; 3 key scalars; per shuffle: permutation, N re-encryption scalars, N commitment scalars (in output order), N chain scalars, w1..w4, N wHat, N wPrime; then per position, per seat, one DLEQ nonce.',
        'seed': b'shuffle'.ljust(32, b'\x00').hex(),
        'secrets': [enc_scalar(x).hex() for x in xs], 'publics': [p.hex() for p in pks], 'joint': joint.hex(),
        'cards': codes, 'shuffles': shuffles, 'shares': shares, 'opened': opened,
    }
    for name, obj in (('encodings', enc), ('schnorr', schnorr), ('shuffle', shuffle)):
        with open('%s/blind-%s.json' % (outdir, name), 'w') as f:
            json.dump(obj, f, indent=1); f.write('\n')


if __name__ == '__main__':
    main(sys.argv[1] if len(sys.argv) > 1 else 'test/fixtures')
