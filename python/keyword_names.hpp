#pragma once
// The Engine's keywords as the library's messages name them (storage="gpu", step_tokens),
// in place of the command line's options once the module is imported.

#include "core/option_names.hpp"

namespace pleshard::python {

[[nodiscard]] const OptionSpelling& keyword_spelling();

}  // namespace pleshard::python
