#pragma once
// Umbrella header of the pleshard library (installed as <pleshard/pleshard.hpp>).

#include "config/model_config.hpp"
#include "core/collective.hpp"
#include "core/error.hpp"
#include "engine/batch_job.hpp"
#include "engine/embed.hpp"
#include "engine/ple_engine.hpp"
#include "ckpt/ple_checkpoint.hpp"
#include "dist/topology.hpp"
#include "engine/step_scheduler.hpp"
#include "hash/ngram_ids.hpp"
#include "hash/ple_layer_spec.hpp"
#include "hash/token_batch.hpp"
#include "io/batch_json.hpp"
#include "io/requests.hpp"
#include "store/storage_tier.hpp"
#include "store/table_factory.hpp"
