// The float32 order both token choosers rank by (`choose.wgsl` and `generation_choose.wgsl`
// are each compiled with this file in front of them: WGSL has no imports).

// A float32's bits as an integer in the order of its value; 0 for NaN and -Infinity, which
// never win. Both zeros are one key.
fn order_key(bits: u32) -> u32 {
    let magnitude = bits & 0x7fffffffu;
    if (magnitude > 0x7f800000u || bits == 0xff800000u) {
        return 0u;
    }
    if (magnitude == 0u) {
        return 0x80000000u;
    }
    if ((bits & 0x80000000u) == 0u) {
        return bits | 0x80000000u;
    }
    return ~bits;
}

// (key a, id a) beats (key b, id b): a higher score, or an equal one at a lower id.
fn beats(key_a: u32, id_a: u32, key_b: u32, id_b: u32) -> bool {
    return key_a > key_b || (key_a == key_b && id_a < id_b);
}

// A finite non-zero float32's magnitude as m * 2^(e - 23) with bit 23 of m set: (m, e).
fn normalized(bits: u32) -> vec2<i32> {
    let exponent = (bits >> 23u) & 0xffu;
    let fraction = bits & 0x7fffffu;
    if (exponent == 0u) {
        let shift = countLeadingZeros(fraction) - 8u;
        return vec2<i32>(i32(fraction << shift), -126 - i32(shift));
    }
    return vec2<i32>(i32(fraction | 0x800000u), i32(exponent) - 127);
}
