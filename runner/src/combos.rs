//! The side-by-side decode benchmark's two steps that need the core (`bench/decode-combos`):
//! `plan` checks every combination over the common base query before any browser starts,
//! and `table` sets the finished runs side by side against the seed's loop.

pub mod combination;
pub mod plan;
pub mod pool_sizes;
pub mod table;

/// Why the input cannot be used: the command exits 2.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InputError(pub String);

impl std::fmt::Display for InputError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for InputError {}
