// The seed's token choice (crate/src/choose.rs) on the GPU: one workgroup per sequence picks
// the highest penalised score's id (first index of equals) from that sequence's logits,
// writes it where the next decoder step reads its token_ids, and updates the sequence.
//
// Exactness. Logits are read as bits and compared as integers, never as floats: WGSL lets an
// implementation flush subnormals and assume no NaN or Infinity, which would change answers.
// The CPU compares doubles: an unseen id's raw score, or a seen id's `raw / 1.2` (raw >= 0) or
// `raw * 1.2` (raw < 0), each rounded to double. That penalty is strictly increasing in raw
// (distinct float32s stay distinct through one double operation, which never overflows or
// underflows on float32 input), so among seen ids the best by raw score is the best by
// penalised score. The reduction keeps the best unseen and the best seen id by raw score; one
// invocation then computes the seen one's penalised double exactly with integer arithmetic
// and compares it with the unseen one's score widened to double.

// Per sequence in `record`: last id (NONE before the first), run length, chosen count,
// failed flag, then the ring of the last HISTORY chosen ids (NO_CANDIDATE where none was).
const HEADER: u32 = 4u;
const HISTORY: u32 = 64u;
const RECORD: u32 = 68u;
const NONE: u32 = 0xffffffffu;
const NO_CANDIDATE: i32 = -1;
const WORKGROUP: u32 = 256u;
// 1.2 as a double: (6 * 2^52 - 1) / 5 * 2^-52, its 53-bit mantissa in two words.
const PENALTY_HI: u32 = 0x00133333u;
const PENALTY_LO: u32 = 0x33333333u;

struct Params {
    vocab: u32,
    words: u32,
    max_run: u32,
    _unused: u32,
}

@group(0) @binding(0) var<storage, read> logits: array<u32>;
@group(0) @binding(1) var<storage, read> content: array<u32>;
@group(0) @binding(2) var<storage, read_write> seen: array<u32>;
@group(0) @binding(3) var<storage, read_write> record: array<u32>;
@group(0) @binding(4) var<storage, read_write> tokens: array<i32>;
@group(0) @binding(5) var<uniform> params: Params;

var<workgroup> unseen_keys: array<u32, WORKGROUP>;
var<workgroup> unseen_ids: array<u32, WORKGROUP>;
var<workgroup> seen_keys: array<u32, WORKGROUP>;
var<workgroup> seen_ids: array<u32, WORKGROUP>;

// A double's bits (hi, lo) as a pair compared high word first, in the order of its value.
fn order_key64(bits: vec2<u32>) -> vec2<u32> {
    if ((bits.x & 0x7fffffffu) == 0u && bits.y == 0u) {
        return vec2<u32>(0x80000000u, 0u);
    }
    if ((bits.x & 0x80000000u) == 0u) {
        return vec2<u32>(bits.x | 0x80000000u, bits.y);
    }
    return ~bits;
}

fn greater64(a: vec2<u32>, b: vec2<u32>) -> bool {
    return a.x > b.x || (a.x == b.x && a.y > b.y);
}

// The double of a float32 (exact), as bits (hi, lo). Not called on NaN.
fn widened(bits: u32) -> vec2<u32> {
    let sign = bits & 0x80000000u;
    let magnitude = bits & 0x7fffffffu;
    if (magnitude == 0x7f800000u) {
        return vec2<u32>(sign | 0x7ff00000u, 0u);
    }
    if (magnitude == 0u) {
        return vec2<u32>(sign, 0u);
    }
    let me = normalized(bits);
    let fraction = u32(me.x) & 0x7fffffu;
    let biased = u32(me.y + 1023);
    return vec2<u32>(sign | (biased << 20u) | (fraction >> 3u), fraction << 29u);
}

// The seed's penalty in doubles, as bits (hi, lo): `raw * 1.2` for raw < 0, `raw / 1.2`
// otherwise, rounded to nearest even. Not called on NaN.
fn penalised(bits: u32) -> vec2<u32> {
    let sign = bits & 0x80000000u;
    let magnitude = bits & 0x7fffffffu;
    // Infinity stays Infinity, zero stays zero (of its sign).
    if (magnitude == 0x7f800000u || magnitude == 0u) {
        return widened(bits);
    }
    let me = normalized(bits);
    let m = u32(me.x);
    // The 53-bit result mantissa (hi, lo), the first dropped bit, whether any bit below it
    // is set, and the exponent of the leading bit.
    var mantissa_hi: u32;
    var mantissa_lo: u32;
    var round: u32;
    var sticky: bool;
    var exponent: i32;
    if (sign != 0u) {
        // |raw| * 1.2 = (m * M) * 2^(e - 75), M the mantissa of 1.2: shift and add into three
        // words (m * M < 2^77).
        var p0 = 0u;
        var p1 = 0u;
        var p2 = 0u;
        for (var bit = 23i; bit >= 0i; bit -= 1i) {
            p2 = (p2 << 1u) | (p1 >> 31u);
            p1 = (p1 << 1u) | (p0 >> 31u);
            p0 = p0 << 1u;
            if (((m >> u32(bit)) & 1u) == 1u) {
                let s0 = p0 + PENALTY_LO;
                let c0 = select(0u, 1u, s0 < p0);
                let t1 = p1 + PENALTY_HI;
                let s1 = t1 + c0;
                let c1 = select(0u, 1u, t1 < p1 || s1 < t1);
                p0 = s0;
                p1 = s1;
                p2 = p2 + c1;
            }
        }
        // The leading bit is bit 75 or 76 (bit 12 of the third word).
        let lead = 75u + ((p2 >> 12u) & 1u);
        let shift = lead - 52u;
        mantissa_lo = (p0 >> shift) | (p1 << (32u - shift));
        mantissa_hi = (p1 >> shift) | (p2 << (32u - shift));
        round = (p0 >> (shift - 1u)) & 1u;
        sticky = (p0 & ((1u << (shift - 1u)) - 1u)) != 0u;
        exponent = i32(lead) + me.y - 75;
    } else {
        // raw / 1.2 = (m * 2^85 / M) * 2^(e - 56): restoring division, one bit at a time
        // (the quotient is 56 or 57 bits, the remainder below 2^54).
        var r_hi = 0u;
        var r_lo = 0u;
        var q_hi = 0u;
        var q_lo = 0u;
        for (var position = 0u; position < 109u; position += 1u) {
            var next = 0u;
            if (position < 24u) {
                next = (m >> (23u - position)) & 1u;
            }
            r_hi = (r_hi << 1u) | (r_lo >> 31u);
            r_lo = (r_lo << 1u) | next;
            q_hi = (q_hi << 1u) | (q_lo >> 31u);
            q_lo = q_lo << 1u;
            if (r_hi > PENALTY_HI || (r_hi == PENALTY_HI && r_lo >= PENALTY_LO)) {
                let borrow = select(0u, 1u, r_lo < PENALTY_LO);
                r_lo = r_lo - PENALTY_LO;
                r_hi = r_hi - PENALTY_HI - borrow;
                q_lo = q_lo | 1u;
            }
        }
        // The leading bit is bit 55 or 56 (bit 24 of the high word).
        let lead = 55u + ((q_hi >> 24u) & 1u);
        let shift = lead - 52u;
        mantissa_lo = (q_lo >> shift) | (q_hi << (32u - shift));
        mantissa_hi = q_hi >> shift;
        round = (q_lo >> (shift - 1u)) & 1u;
        sticky = (q_lo & ((1u << (shift - 1u)) - 1u)) != 0u || r_hi != 0u || r_lo != 0u;
        exponent = i32(lead) + me.y - 56;
    }
    if (round == 1u && (sticky || (mantissa_lo & 1u) == 1u)) {
        mantissa_lo = mantissa_lo + 1u;
        if (mantissa_lo == 0u) {
            mantissa_hi = mantissa_hi + 1u;
        }
        // Rounded up to 2^53: one more in the exponent, the mantissa back to 2^52.
        if (mantissa_hi == 0x200000u) {
            mantissa_hi = 0x100000u;
            exponent = exponent + 1;
        }
    }
    return vec2<u32>(sign | (u32(exponent + 1023) << 20u) | (mantissa_hi & 0xfffffu), mantissa_lo);
}

fn has_bit(set_base: u32, id: u32, in_content: bool) -> bool {
    if (in_content) {
        return ((content[id >> 5u] >> (id & 31u)) & 1u) == 1u;
    }
    return ((seen[set_base + (id >> 5u)] >> (id & 31u)) & 1u) == 1u;
}

@compute @workgroup_size(WORKGROUP)
fn choose(@builtin(workgroup_id) group: vec3<u32>, @builtin(local_invocation_index) lane: u32) {
    let sequence = group.x;
    let base = sequence * params.vocab;
    let seen_base = sequence * params.words;
    let at = sequence * RECORD;
    let last = record[at];
    let run = record[at + 1u];
    // The last decoded id, when it is a content id ending a run of at least max_run.
    var blocked = NONE;
    if (last != NONE && run >= params.max_run && has_bit(0u, last, true)) {
        blocked = last;
    }

    // Each lane: the best unseen and the best seen (not blocked) id of its stride; ids rise
    // within a lane, so `>` keeps the first of equals.
    var unseen_key = 0u;
    var unseen_id = NONE;
    var seen_key = 0u;
    var seen_id = NONE;
    for (var id = lane; id < params.vocab; id += WORKGROUP) {
        let key = order_key(logits[base + id]);
        if (!has_bit(seen_base, id, false)) {
            if (key > unseen_key) {
                unseen_key = key;
                unseen_id = id;
            }
        } else if (id != blocked && key > seen_key) {
            seen_key = key;
            seen_id = id;
        }
    }
    unseen_keys[lane] = unseen_key;
    unseen_ids[lane] = unseen_id;
    seen_keys[lane] = seen_key;
    seen_ids[lane] = seen_id;
    workgroupBarrier();
    for (var half = WORKGROUP / 2u; half > 0u; half = half / 2u) {
        if (lane < half) {
            let other = lane + half;
            if (beats(unseen_keys[other], unseen_ids[other], unseen_keys[lane], unseen_ids[lane])) {
                unseen_keys[lane] = unseen_keys[other];
                unseen_ids[lane] = unseen_ids[other];
            }
            if (beats(seen_keys[other], seen_ids[other], seen_keys[lane], seen_ids[lane])) {
                seen_keys[lane] = seen_keys[other];
                seen_ids[lane] = seen_ids[other];
            }
        }
        workgroupBarrier();
    }
    if (lane != 0u) {
        return;
    }

    let best_unseen = unseen_ids[0];
    let best_seen = seen_ids[0];
    var winner = NONE;
    if (unseen_keys[0] == 0u) {
        if (seen_keys[0] != 0u) {
            winner = best_seen;
        }
    } else if (seen_keys[0] == 0u) {
        winner = best_unseen;
    } else {
        let p = order_key64(penalised(logits[base + best_seen]));
        let x = order_key64(widened(logits[base + best_unseen]));
        if (greater64(p, x)) {
            winner = best_seen;
        } else if (greater64(x, p)) {
            winner = best_unseen;
        } else {
            winner = min(best_seen, best_unseen);
        }
    }

    let count = record[at + 2u];
    var chosen = NO_CANDIDATE;
    // Once a step had no candidate the sequence stays failed until reset.
    if (record[at + 3u] == 0u && winner != NONE) {
        chosen = i32(winner);
        seen[seen_base + (winner >> 5u)] = seen[seen_base + (winner >> 5u)] | (1u << (winner & 31u));
        if (last == winner) {
            record[at + 1u] = select(run + 1u, run, run == NONE);
        } else {
            record[at] = winner;
            record[at + 1u] = 1u;
        }
    } else {
        record[at + 3u] = 1u;
    }
    record[at + HEADER + count % HISTORY] = bitcast<u32>(chosen);
    record[at + 2u] = count + 1u;
    tokens[sequence] = chosen;
}
