#![doc = include_str!("../README.md")]

mod app;
mod audit;
mod bench;
mod cli;
mod error;
mod exit;
mod format;
mod input;
mod inspect;
mod kind;
mod outcomes;
mod output;
mod plot;
mod replay;
mod run;
mod simulate;
mod world;

pub use app::{main, run};
pub use error::Error;
pub use exit::Exit;
pub use outcomes::{Tally, read_outcomes};
