//! Endpoint names compared in line: what finding an endpoint's state costs on
//! every call, in this crate's store and in the policy's table of breakers.

/// Whether two endpoint names are the same, compared sixteen bytes at a time
/// in line rather than by a call to the C library's `memcmp`, which costs more
/// than the comparison for names of a few dozen bytes. For a table that finds
/// an endpoint's state by its name on every call.
///
/// ```
/// use bayesretry_store::same_name;
///
/// assert!(same_name("api.example.com", "api.example.com"));
/// assert!(!same_name("api.example.com", "api.example.org"));
/// ```
#[inline(always)]
pub fn same_name(a: &str, b: &str) -> bool {
    same_bytes(a.as_bytes(), b.as_bytes())
}

/// `name` as a store keeps it: its first `max_bytes` bytes, cut back to the
/// character boundary at or before that (whole characters only, never
/// replaced or hashed), or the whole name if it is no longer. Names that
/// differ only past the cut are one endpoint to the store
/// ([`StoreConfig::with_max_endpoint_bytes`](crate::StoreConfig::with_max_endpoint_bytes)),
/// and to the policy's table of breakers, which cuts with this.
///
/// ```
/// use bayesretry_store::clip_name;
///
/// assert_eq!(clip_name("api.example.com", 8), "api.exam");
/// assert_eq!(clip_name("api", 8), "api");
/// // the ninth byte is inside `é`: the cut falls before it
/// assert_eq!(clip_name("api.exampé", 10), "api.examp");
/// ```
#[inline]
pub fn clip_name(name: &str, max_bytes: usize) -> &str {
    if name.len() <= max_bytes {
        return name;
    }
    // a boundary is at most three bytes back, and 0 is one: the loop ends
    let mut end = max_bytes;
    while !name.is_char_boundary(end) {
        end -= 1;
    }
    name.get(..end).unwrap_or("")
}

/// `a == b`, compared sixteen bytes at a time in line (the last block
/// overlapping the one before): endpoint names are a few dozen bytes, too
/// short for a call to `memcmp` to pay.
#[inline(always)]
pub(crate) fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    if a.len() < 16 {
        return match (a.first_chunk::<8>(), b.first_chunk::<8>()) {
            (Some(x), Some(y)) => x == y && a.last_chunk::<8>() == b.last_chunk::<8>(),
            _ => a == b,
        };
    }
    let (mut x, mut y) = (a, b);
    while x.len() > 16 {
        match (x.split_first_chunk::<16>(), y.split_first_chunk::<16>()) {
            (Some((p, rest_x)), Some((q, rest_y))) => {
                if p != q {
                    return false;
                }
                (x, y) = (rest_x, rest_y);
            }
            _ => break,
        }
    }
    a.last_chunk::<16>() == b.last_chunk::<16>()
}

#[cfg(test)]
mod tests {
    use super::same_bytes;

    proptest::proptest! {
        /// The in-line comparison of names agrees with `==` at every length
        /// around the widths it compares at, for equal names and for names that
        /// differ in any one byte.
        #[test]
        fn same_bytes_is_equality(
            name in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..50),
            at in proptest::prelude::any::<usize>(),
            flip in 1_u8..=255,
            cut in 0_usize..3,
        ) {
            proptest::prop_assert!(same_bytes(&name, &name.clone()));
            if !name.is_empty() {
                let mut other = name.clone();
                other[at % name.len()] ^= flip;
                proptest::prop_assert!(!same_bytes(&name, &other));
            }
            let shorter = &name[..name.len().saturating_sub(cut)];
            proptest::prop_assert_eq!(same_bytes(&name, shorter), name.len() == shorter.len());
        }
    }
}
