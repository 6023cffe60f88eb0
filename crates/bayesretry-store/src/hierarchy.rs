//! The hierarchical prior: what a context borrows from its parents.

use bayesretry_decay::Evidence;

/// The evidence a context borrows from its parents, worth at most `max_borrowed`
/// pseudo-observations; see [the crate documentation](crate#hierarchical-priors).
///
/// - `own`: the context's own evidence (decayed);
/// - `endpoint_class`: the evidence of every context with the same endpoint and
///   class, this one included (decayed);
/// - `class`: the evidence of every context with the same class, at any
///   endpoint, these included (decayed).
///
/// Each parent lends only what its children do not already count: the endpoint
/// level lends its *other* attempts (`endpoint_class − own`), the class level its
/// *other* endpoints (`class − endpoint_class`), so no outcome is counted twice.
/// The class level is capped at `max_borrowed` first and then pooled with the
/// endpoint level, which is capped again: the endpoint's own history outweighs
/// the class's once it has more than `max_borrowed` outcomes, and the total
/// never exceeds `max_borrowed`. Capping keeps each level's mean.
///
/// ```
/// use bayesretry_decay::Evidence;
/// use bayesretry_store::borrowed_evidence;
///
/// let class = Evidence::new(950.0, 50.0).unwrap(); // 429s clear 95 % of the time
/// let fresh = borrowed_evidence(Evidence::NONE, Evidence::NONE, class, 10.0);
/// assert!((fresh.strength() - 10.0).abs() < 1e-12);
/// assert!((fresh.mean().unwrap() - 0.95).abs() < 1e-12);
/// // Parents that know nothing lend nothing: the plain prior.
/// assert_eq!(borrowed_evidence(Evidence::NONE, Evidence::NONE, Evidence::NONE, 10.0), Evidence::NONE);
/// ```
#[inline]
pub fn borrowed_evidence(
    own: Evidence,
    endpoint_class: Evidence,
    class: Evidence,
    max_borrowed: f64,
) -> Evidence {
    let other_attempts = endpoint_class.minus(own);
    let other_endpoints = class.minus(endpoint_class);
    other_endpoints
        .capped(max_borrowed)
        .plus(other_attempts)
        .capped(max_borrowed)
}

#[cfg(test)]
mod tests {
    use bayesretry_decay::Evidence;

    use super::borrowed_evidence;

    fn e(s: f64, f: f64) -> Evidence {
        Evidence::new(s, f).unwrap()
    }

    #[test]
    fn own_evidence_is_never_borrowed_back() {
        // The only evidence is the context's own: nothing to borrow.
        let own = e(3.0, 7.0);
        assert_eq!(borrowed_evidence(own, own, own, 10.0), Evidence::NONE);
    }

    #[test]
    fn the_endpoint_outweighs_the_class_once_it_has_enough() {
        let class = e(900.0, 100.0); // 90 %
        let endpoint = e(10.0, 90.0); // 10 %, at other attempts
        let lent = borrowed_evidence(Evidence::NONE, endpoint, class.plus(endpoint), 10.0);
        assert!((lent.strength() - 10.0).abs() < 1e-12);
        // (9 + 10) / (10 + 100) of the pooled evidence, scaled to 10.
        let mean = lent.mean().unwrap();
        assert!((mean - 19.0 / 110.0).abs() < 1e-12, "{mean}");
    }

    #[test]
    fn thin_parents_lend_what_they_have() {
        let lent = borrowed_evidence(Evidence::NONE, e(1.0, 0.0), e(1.0, 2.0), 10.0);
        assert_eq!(lent, e(1.0, 2.0));
    }
}
