//! karplint: an offline linter that tells platform engineers, from the YAML alone, why
//! Karpenter would leave a pod Pending.
//!
//! The pipeline is visible in the module tree:
//! [`discover`] (with [`kustomize`] rendering) → [`parse`] (spans) → [`model`] → [`index`] → [`rules`] (reading [`facts`])
//! → [`report`], with the Karpenter simulator in [`karpenter`] and the whole run, as named
//! phases, in [`engine`].

#![forbid(unsafe_code)]

pub mod cli;
pub(crate) mod config;
pub(crate) mod diagnostic;
pub mod diff;
pub(crate) mod discover;
pub mod engine;
pub(crate) mod facts;
#[doc(hidden)]
pub mod fuzzing;
pub(crate) mod helm;
pub(crate) mod index;
pub mod karpenter;
pub(crate) mod kustomize;
pub(crate) mod model;
pub mod parse;
pub(crate) mod progress;
pub(crate) mod quantity;
pub mod report;
pub mod rules;
pub(crate) mod suggest;
pub(crate) mod suppress;
