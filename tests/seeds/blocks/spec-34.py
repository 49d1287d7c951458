@kernel(
  cpp_includes=["pto/cpu/TMrgSort.hpp"],
  cpp_src=\"\"\"/* C++ body compiled into the artifact */\"\"\",
)
def topk_kernel(...):  # annotated params required
    pass
