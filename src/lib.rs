//! karplint: an offline linter that tells platform engineers, from the YAML alone, why
//! Karpenter would leave a pod Pending.
//!
//! The pipeline is visible in the module tree:
//! [`discover`] → [`parse`] (spans) → [`model`] → [`index`] → [`rules`] (reading [`facts`])
//! → [`report`], with the Karpenter simulator in [`karpenter`] and the whole run, as named
//! phases, in [`engine`].

pub mod cli;
pub mod config;
pub mod diagnostic;
pub mod discover;
pub mod engine;
pub mod facts;
#[doc(hidden)]
pub mod fuzzing;
pub mod index;
pub mod karpenter;
pub mod model;
pub mod parse;
pub mod progress;
pub mod quantity;
pub mod report;
pub mod rules;
pub mod suppress;
