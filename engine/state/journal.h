#pragma once
// The local journal an apply keeps when its state backend stops answering (a
// PostgreSQL server that went down mid-apply), and how it gets back into the
// state (docs/state.md, "Local journal").

#include <string>

#include "engine/core/result.h"
#include "engine/state/state.h"

namespace plinth::state {

/// Where an apply on the state at `location` keeps its local journal: the
/// user's own directory $PLINTH_JOURNAL_DIR, else $XDG_STATE_HOME/plinth/journal,
/// else ~/.local/state/plinth/journal (never the working directory, which a
/// pull request controls), then a file named after the location (its password
/// left out), e.g. ".../journal/3f2a9c0b1d4e5f60.state.json". The journal is a
/// local state file (history, lock and all): the state as last saved to the
/// backend, then one version per operation completed after.
std::string journal_path(const std::string& location);

/// True when a journal file exists at `path`.
bool journal_exists(const std::string& path);

/// Refuses a journal that someone else could have put there: the file and
/// its directory must belong to the user running plinth, not be symbolic
/// links, and the directory must not be writable by group or others. The
/// error names the path and says what to fix.
Status check_journal_owner(const std::string& path);

/// Writes the journal at `path` (read through `journal`, which the caller
/// opened on it with the state's encryption) into `target` (locked by the
/// caller), then removes the journal. Refused, with nothing written and the
/// journal kept, when the target holds another lineage or was changed since
/// the journal's first version (another run saved in between): the message
/// says how to compare them. A journal the target already holds (the same
/// serial and resources) is only removed. Returns what was done, for the user.
Result<std::string> push_journal(Backend& journal, const std::string& path, Backend& target);

}  // namespace plinth::state
