//! [`Context`]: the key a belief is about.

use crate::error_class::ErrorClass;

/// The context a belief is about: the endpoint, the number of the attempt that
/// just failed (1-based), and how it failed.
///
/// Its posterior answers "given that attempt `attempt` to `endpoint` just failed
/// with `error_class`, will the next attempt succeed?". The attempt number is part
/// of the key because the answer changes with it: the first retry after a 429
/// often succeeds, the fifth retry of a call that failed four times rarely does.
///
/// A context borrows its endpoint name: building one allocates nothing, and a
/// store copies the name only the first time it sees it.
///
/// ```
/// use bayesretry_store::{Context, ErrorClass};
///
/// let ctx = Context::new("api.openai.com/v1/chat", 1, ErrorClass::Http(429));
/// assert_eq!(ctx.attempt(), 1);
/// let next = ctx.with_attempt(2);
/// assert_eq!((next.endpoint(), next.error_class()), (ctx.endpoint(), ErrorClass::Http(429)));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Context<'a> {
    endpoint: &'a str,
    attempt: u32,
    error_class: ErrorClass,
}

impl<'a> Context<'a> {
    /// The context of attempt `attempt` (1-based) to `endpoint`, which failed with
    /// `error_class`.
    pub const fn new(endpoint: &'a str, attempt: u32, error_class: ErrorClass) -> Context<'a> {
        Context {
            endpoint,
            attempt,
            error_class,
        }
    }

    /// The endpoint: a name for the dependency, chosen by the caller (a host, a
    /// route, a model) — low-cardinality, like the class.
    pub const fn endpoint(&self) -> &'a str {
        self.endpoint
    }

    /// The number of the attempt that just failed, 1 for the first call.
    pub const fn attempt(&self) -> u32 {
        self.attempt
    }

    /// How the attempt failed.
    pub const fn error_class(&self) -> ErrorClass {
        self.error_class
    }

    /// The same endpoint and class at another attempt: the context a lookahead
    /// reads for the attempts after this one.
    pub const fn with_attempt(self, attempt: u32) -> Context<'a> {
        Context { attempt, ..self }
    }
}
