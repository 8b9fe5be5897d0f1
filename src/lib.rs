//! karplint: an offline linter that tells platform engineers, from the YAML alone, why
//! Karpenter would leave a pod Pending.
//!
//! The pipeline is visible in the module tree:
//! `discover` → `parse` (spans) → `model` → `index` → `rules` → `report`,
//! with the Karpenter simulator in `karpenter`.

pub mod karpenter;
pub mod quantity;
