#pragma once
// Umbrella header of the pleshard library (installed as <pleshard/pleshard.hpp>).

#include "config/model_config.hpp"
#include "core/collective.hpp"
#include "core/error.hpp"
#include "engine/hash_job.hpp"
#include "engine/step_scheduler.hpp"
#include "hash/ngram_ids.hpp"
#include "hash/ple_layer_spec.hpp"
#include "hash/token_batch.hpp"
#include "io/batch_json.hpp"
#include "io/requests.hpp"
