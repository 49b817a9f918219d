#pragma once
// One table's embeddings of one step, as Python sees them: a view of the engine's output slot
// (no copy), exported through DLPack (__dlpack__, __dlpack_device__), on a GPU through
// __cuda_array_interface__ (version 3) too, and on the host as a NumPy view. Every access
// first checks that the slot still holds this step's rows: once output_slots later steps
// have run, it raises instead of handing out another step's rows. Views handed out before
// (NumPy, DLPack) keep the slot's memory: they stay readable after the engine is closed.

#include <memory>

#include <pybind11/pybind11.h>

#include "engine.hpp"

namespace pleshard::python {

class EmbeddingArray {
 public:
  EmbeddingArray(std::shared_ptr<PythonEngine> engine, StepOutput step, int table);

  // RuntimeError (pleshard's one line) when the slot holds another step's rows by now.
  void check() const;
  [[nodiscard]] const EmbeddingView& view() const { return step_.layers[static_cast<std::size_t>(table_)]; }
  [[nodiscard]] const StepOutput& step() const { return step_; }
  [[nodiscard]] int table() const { return table_; }
  [[nodiscard]] bool on_gpu() const { return step_.on_device; }
  [[nodiscard]] bool valid() const { return engine_->holds(step_); }
  [[nodiscard]] int gpu() const { return gpu_; }
  [[nodiscard]] PythonEngine& engine() const { return *engine_; }

 private:
  std::shared_ptr<PythonEngine> engine_;  // kept alive while any of its arrays is
  std::shared_ptr<const void> memory_;    // the slots' memory, beyond the engine's close()
  StepOutput step_;
  int table_;
  int gpu_ = -1;  // the engine's CUDA device, or -1
};

// The Python class pleshard.Embeddings.
void bind_embedding_array(pybind11::module_& module);

}  // namespace pleshard::python
