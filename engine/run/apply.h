#pragma once
// The execution half of apply and destroy: the policy gate, the inventory
// check, the question, the executor (with progress events and cancellation)
// and the outcome. The plan comes from run::plan or a saved plan file.
#include "engine/run/events.h"
#include "engine/run/options.h"
#include "engine/run/plan.h"
#include "engine/run/provider_set.h"

namespace plinth::run {

/// Runs the changes of `planned.plan` against `planned.state` (locked):
/// reports the plan (Events::planned), runs the policy gate (before any
/// provider call that changes anything) and the inventory check, asks
/// options.confirm when there are changes, then executes with
/// options.parallelism and the providers' limits, reporting every operation
/// (and, every progress_interval, those still in flight) and the outcome
/// (Events::applied). Without changes, what the refresh observed (drift,
/// adoptions) is saved. options.cancel stops starting operations (Stop) or
/// cancels those in flight (Now). True only when every change succeeded.
bool apply(const ApplyOptions& options, Planned& planned, ProviderSet& providers, Events& events);

}  // namespace plinth::run
