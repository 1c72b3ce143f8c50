//! `.jevl` record lines (systemone-wire.md §15). Owned by the canonical/record work.
