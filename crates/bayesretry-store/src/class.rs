//! Error classes as the store keeps them: owned, so that a custom class read
//! from a snapshot needs no `'static` name.

#[cfg(feature = "std")]
use alloc::boxed::Box;
#[cfg(all(feature = "std", feature = "serde"))]
use alloc::string::String;

use crate::error_class::ErrorClass;
#[cfg(feature = "std")]
use crate::hash::hash_bytes;

/// A class, borrowed: what lookups compare against.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ClassRef<'a> {
    /// Any class but [`ErrorClass::Custom`].
    Builtin(ErrorClass),
    /// A custom class, by name.
    Custom(&'a str),
}

#[cfg(feature = "std")]
impl ClassRef<'_> {
    pub(crate) const fn of(class: ErrorClass) -> ClassRef<'static> {
        match class {
            ErrorClass::Custom(name) => ClassRef::Custom(name),
            other => ClassRef::Builtin(other),
        }
    }

    /// The number that stands for the class in hashes.
    #[inline]
    pub(crate) fn word(&self, seed: u64) -> u64 {
        match self {
            ClassRef::Builtin(class) => class.code(),
            ClassRef::Custom(name) => hash_bytes(seed, name.as_bytes()),
        }
    }

    pub(crate) fn to_owned_class(self) -> OwnedClass {
        match self {
            ClassRef::Builtin(class) => OwnedClass::Builtin(class),
            ClassRef::Custom(name) => OwnedClass::Custom(Box::from(name)),
        }
    }
}

/// A class, owned.
#[cfg(feature = "std")]
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum OwnedClass {
    /// Any class but [`ErrorClass::Custom`].
    Builtin(ErrorClass),
    /// A custom class, by name.
    Custom(Box<str>),
}

#[cfg(feature = "std")]
impl OwnedClass {
    #[inline]
    pub(crate) fn as_ref(&self) -> ClassRef<'_> {
        match self {
            OwnedClass::Builtin(class) => ClassRef::Builtin(*class),
            OwnedClass::Custom(name) => ClassRef::Custom(name),
        }
    }

    /// The class as a snapshot writes it.
    #[cfg(feature = "serde")]
    pub(crate) fn encode(&self) -> String {
        use alloc::string::ToString;
        match self {
            OwnedClass::Builtin(class) => class.to_string(),
            OwnedClass::Custom(name) => {
                alloc::format!("{}{name}", crate::snapshot::CUSTOM_PREFIX)
            }
        }
    }

    /// Heap bytes held besides the value itself.
    pub(crate) fn heap_bytes(&self) -> usize {
        match self {
            OwnedClass::Builtin(_) => 0,
            OwnedClass::Custom(name) => name.len(),
        }
    }
}
