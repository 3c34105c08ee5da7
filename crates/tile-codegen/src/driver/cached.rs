//! The pipeline's side of the kernel cache ([`crate::cache`]): the key of
//! each target's output, the outputs found, and the ones compiled stored.

use super::output::TargetOutput;
use super::Compiled;
use crate::cache::{Cache, Digest, KeyInputs, Lookup};
use crate::target::Target;

/// A specialization's targets and their keys in the cache, if there is one.
pub(super) struct CachedTargets<'a> {
    cache: Option<&'a Cache>,
    targets: &'a [Target],
    keys: Vec<Option<Digest>>,
}

impl<'a> CachedTargets<'a> {
    /// The keys of `targets` in `cache`, from each target's `inputs`.
    pub(super) fn new<'k>(
        cache: Option<&'a Cache>,
        targets: &'a [Target],
        inputs: impl Fn(Target) -> KeyInputs<'k>,
    ) -> CachedTargets<'a> {
        let keys = targets
            .iter()
            .map(|&target| cache.map(|c| c.key(&inputs(target))))
            .collect();
        CachedTargets {
            cache,
            targets,
            keys,
        }
    }

    /// The output of each target found in the cache (`None`: to compile);
    /// the hits and the entries that could not be used go to `compiled`.
    pub(super) fn look_up(&self, compiled: &mut Compiled) -> Vec<Option<TargetOutput>> {
        self.targets
            .iter()
            .zip(&self.keys)
            .map(|(&target, key)| {
                let (cache, key) = (self.cache?, key.as_ref()?);
                let payload = match cache.store().get(key) {
                    Lookup::Hit(payload) => payload,
                    Lookup::Miss => return None,
                    Lookup::Unusable(why) => {
                        compiled.cache_notes.push(unusable_note(&why));
                        return None;
                    }
                };
                match TargetOutput::decode(&payload, target) {
                    Ok(output) => {
                        compiled.cached.push(target);
                        Some(output)
                    }
                    Err(why) => {
                        let path = cache.store().path_of(key);
                        let why = format!("{}: {why}", path.display());
                        compiled.cache_notes.push(unusable_note(&why));
                        None
                    }
                }
            })
            .collect()
    }

    /// Stores the outputs of the targets that were compiled (indices
    /// `compiled` into the targets and `outputs`), then trims the cache to
    /// its bound; what fails becomes a note.
    pub(super) fn store(
        &self,
        compiled: &[usize],
        outputs: &[Option<TargetOutput>],
        notes: &mut Vec<String>,
    ) {
        let Some(cache) = self.cache else { return };
        let mut stored = false;
        for &i in compiled {
            let (Some(key), Some(output)) = (&self.keys[i], &outputs[i]) else {
                continue;
            };
            match cache.store().put(key, &output.encode()) {
                Ok(()) => stored = true,
                Err(e) => notes.push(format!("the kernel cache could not store an entry: {e}")),
            }
        }
        if stored {
            if let Err(e) = cache.store().trim() {
                notes.push(format!("the kernel cache could not be trimmed: {e}"));
            }
        }
    }
}

/// A note on a cache entry that could not be used.
fn unusable_note(why: &str) -> String {
    format!("the kernel cache entry {why}; it was rebuilt")
}
