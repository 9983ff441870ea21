// An imported model's token rule (crate/src/generation_choose.rs: greedy under
// generation_config.json's repetition_penalty and no_repeat_ngram_size) on the GPU: one
// workgroup picks the highest processed score's id (first index of equals) from the step's
// logits, appends it to the decoder's input ids kept here, and writes it as the next step's
// int64 input_ids. One sequence: an encoder-decoder reading decodes one at a time.
//
// Exactness. Scores are compared as bits, never as floats (WGSL lets an implementation flush
// subnormals and assume no NaN or Infinity), and the penalty is PyTorch's float32
// arithmetic, `score * penalty` for score < 0 and `score / penalty` otherwise, each rounded
// to nearest even, computed with integer arithmetic: WGSL's float32 division may be 2.5 ULP
// off. The rounding is not strictly increasing (two scores may meet in one float32, and then
// the lower id wins), so every seen id's penalised score is computed, not only the best one's.
//
// The record is choose.wgsl's, so one reader serves both: last id and run length (unused
// here), chosen count, failed flag, then the ring of the last HISTORY chosen ids.
const HEADER: u32 = 4u;
const HISTORY: u32 = 64u;
const NONE: u32 = 0xffffffffu;
const NO_CANDIDATE: i32 = -1;
const WORKGROUP: u32 = 256u;
const ONE: u32 = 0x3f800000u;

struct Params {
    vocab: u32,
    // 32-bit words of an id set (seen, banned).
    words: u32,
    // no_repeat_ngram_size; 0 bans nothing.
    ngram: u32,
    // repetition_penalty's float32 bits: finite, above 0.
    penalty: u32,
}

@group(0) @binding(0) var<storage, read> logits: array<u32>;
@group(0) @binding(1) var<storage, read_write> seen: array<u32>;
// Set and cleared within one dispatch: all zero between dispatches.
@group(0) @binding(2) var<storage, read_write> banned: array<atomic<u32>>;
@group(0) @binding(3) var<storage, read_write> record: array<u32>;
// The decoder's input ids: the decoder start, then each id chosen (count + 1 of them).
@group(0) @binding(4) var<storage, read_write> ids: array<u32>;
// The next step's input_ids, int64 [1, 1]: low word, high word.
@group(0) @binding(5) var<storage, read_write> tokens: array<u32>;
@group(0) @binding(6) var<uniform> params: Params;

var<workgroup> best_keys: array<u32, WORKGROUP>;
var<workgroup> best_ids: array<u32, WORKGROUP>;

// The float32 magnitude nearest (ties to even) to (n + below) * 2^exponent, n = (hi, lo) a
// 64-bit integer of at least 26 bits and `below` whether a fraction under its last bit is
// lost: 24 significant bits, or fewer below 2^-126 (subnormal); Infinity past the largest.
fn rounded(hi: u32, lo: u32, below: bool, exponent: i32) -> u32 {
    var lead = 31 - i32(countLeadingZeros(lo));
    if (hi != 0u) {
        lead = 63 - i32(countLeadingZeros(hi));
    }
    // Bits dropped: down to 24 significant ones, or to the last subnormal bit, 2^-149.
    let shift = max(lead - 23, -149 - exponent);
    if (shift >= 64) {
        // n < 2^48 here: less than half of the smallest subnormal.
        return 0u;
    }
    let s = u32(shift);
    var kept = 0u;
    if (s < 32u) {
        kept = (lo >> s) | (hi << (32u - s));
    } else {
        kept = hi >> (s - 32u);
    }
    var round = 0u;
    var sticky = below;
    if (s - 1u < 32u) {
        round = (lo >> (s - 1u)) & 1u;
        sticky = sticky || (lo & ((1u << (s - 1u)) - 1u)) != 0u;
    } else {
        round = (hi >> (s - 33u)) & 1u;
        sticky = sticky || lo != 0u || (hi & ((1u << (s - 33u)) - 1u)) != 0u;
    }
    if (round == 1u && (sticky || (kept & 1u) == 1u)) {
        kept = kept + 1u;
    }
    // The exponent field of the last kept bit, biased so that 2^-149 is 0: kept's bit 23
    // (when set) adds the 1 of a normal's biased exponent, and a carry out of it another.
    let field = shift + exponent + 149;
    if (field >= 254) {
        return 0x7f800000u;
    }
    return min((u32(field) << 23u) + kept, 0x7f800000u);
}

// transformers' repetition penalty on one score in float32, as bits. NaN, infinities and
// zeros stay as they are (multiplied or divided by a finite positive penalty).
fn penalised(bits: u32) -> u32 {
    let magnitude = bits & 0x7fffffffu;
    if (magnitude >= 0x7f800000u || magnitude == 0u) {
        return bits;
    }
    let sign = bits & 0x80000000u;
    let a = normalized(bits);
    let p = normalized(params.penalty);
    let ma = u32(a.x);
    let mp = u32(p.x);
    if (sign != 0u) {
        // |score| * penalty = (ma * mp) * 2^(ea + ep - 46): the 48-bit product from 12-bit halves.
        let a1 = ma >> 12u;
        let a0 = ma & 0xfffu;
        let b1 = mp >> 12u;
        let b0 = mp & 0xfffu;
        let low = a0 * b0;
        let mid = a1 * b0 + a0 * b1;
        let high = a1 * b1;
        let lo1 = low + (mid << 12u);
        let lo2 = lo1 + (high << 24u);
        let carries = select(0u, 1u, lo1 < low) + select(0u, 1u, lo2 < lo1);
        let hi = (mid >> 20u) + (high >> 8u) + carries;
        return sign | rounded(hi, lo2, false, a.y + p.y - 46);
    }
    // score / penalty = (q + r / mp) * 2^(ea - ep - 26), q = floor(ma * 2^26 / mp) of 26 or
    // 27 bits: restoring division, one bit at a time (the remainder stays below 2^25).
    var r = 0u;
    var q = 0u;
    for (var position = 0u; position < 50u; position += 1u) {
        var next = 0u;
        if (position < 24u) {
            next = (ma >> (23u - position)) & 1u;
        }
        r = (r << 1u) | next;
        q = q << 1u;
        if (r >= mp) {
            r = r - mp;
            q = q | 1u;
        }
    }
    return rounded(0u, q, r != 0u, a.y - p.y - 26);
}

fn has_bit(id: u32) -> bool {
    return ((seen[id >> 5u] >> (id & 31u)) & 1u) == 1u;
}

@compute @workgroup_size(WORKGROUP)
fn choose(@builtin(local_invocation_index) lane: u32) {
    let count = record[2];
    let length = count + 1u;
    let n = params.ngram;
    // no_repeat_ngram_size: each window of n ids whose first n - 1 equal the last n - 1 ids
    // bans its last id.
    let banning = n > 0u && length + 1u >= n;
    if (banning) {
        let prefix = length + 1u - n;
        for (var start = lane; start + n <= length; start += WORKGROUP) {
            var matches = true;
            for (var i = 0u; i + 1u < n; i += 1u) {
                if (ids[start + i] != ids[prefix + i]) {
                    matches = false;
                    break;
                }
            }
            if (matches) {
                let id = ids[start + n - 1u];
                atomicOr(&banned[id >> 5u], 1u << (id & 31u));
            }
        }
    }
    storageBarrier();

    // Each lane: its stride's best id by processed score; ids rise within a lane, so `>`
    // keeps the first of equals.
    var best_key = 0u;
    var best_id = NONE;
    for (var id = lane; id < params.vocab; id += WORKGROUP) {
        var bits = logits[id];
        if (params.penalty != ONE && has_bit(id)) {
            bits = penalised(bits);
        }
        var key = order_key(bits);
        if (banning && ((atomicLoad(&banned[id >> 5u]) >> (id & 31u)) & 1u) == 1u) {
            key = 0u;
        }
        if (key > best_key) {
            best_key = key;
            best_id = id;
        }
    }
    best_keys[lane] = best_key;
    best_ids[lane] = best_id;
    // Every lane has read the bans: clear them for the next dispatch.
    storageBarrier();
    if (banning) {
        for (var word = lane; word < params.words; word += WORKGROUP) {
            atomicStore(&banned[word], 0u);
        }
    }
    workgroupBarrier();
    for (var half = WORKGROUP / 2u; half > 0u; half = half / 2u) {
        if (lane < half) {
            let other = lane + half;
            if (beats(best_keys[other], best_ids[other], best_keys[lane], best_ids[lane])) {
                best_keys[lane] = best_keys[other];
                best_ids[lane] = best_ids[other];
            }
        }
        workgroupBarrier();
    }
    if (lane != 0u) {
        return;
    }

    var chosen = NO_CANDIDATE;
    // Once a step had no candidate the sequence stays failed until reset.
    if (record[3] == 0u && best_keys[0] != 0u) {
        let winner = best_ids[0];
        chosen = i32(winner);
        seen[winner >> 5u] = seen[winner >> 5u] | (1u << (winner & 31u));
        ids[length] = winner;
    } else {
        record[3] = 1u;
    }
    record[HEADER + count % HISTORY] = bitcast<u32>(chosen);
    record[2] = count + 1u;
    tokens[0] = bitcast<u32>(chosen);
    tokens[1] = select(0u, NONE, chosen < 0);
}
