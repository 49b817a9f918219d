# Runs `pleshard ids` and compares its stdout byte for byte with the golden file.
execute_process(COMMAND ${APP} ids --config ${CONFIG} --ple-index 0 --batch ${BATCH}
                OUTPUT_VARIABLE out0 RESULT_VARIABLE rc0)
execute_process(COMMAND ${APP} ids --config ${CONFIG} --ple-index 1 --batch ${BATCH}
                OUTPUT_VARIABLE out1 RESULT_VARIABLE rc1)
if(NOT rc0 EQUAL 0 OR NOT rc1 EQUAL 0)
  message(FATAL_ERROR "pleshard ids failed: ${rc0} ${rc1}")
endif()
file(READ ${EXPECTED_DIR}/${CASE}.ids0.json expected0)
file(READ ${EXPECTED_DIR}/${CASE}.ids1.json expected1)
if(NOT out0 STREQUAL expected0 OR NOT out1 STREQUAL expected1)
  message(FATAL_ERROR "ids differ from the golden output for ${CASE}")
endif()
message(STATUS "ids equal the golden output for ${CASE}")
