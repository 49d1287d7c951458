extern "C" void wsp_kernel_load_tile(char* const* wsp_t, const int64_t* wsp_s, const double*) {
  float* const p_src = (float*)wsp_t[0]; const int64_t p_src_rs = wsp_s[0], p_src_cs = wsp_s[1];
  float* const p_buf = (float*)wsp_t[1]; const int64_t p_buf_rs = wsp_s[2], p_buf_cs = wsp_s[3];
  // %0 = load
  float v0[8192]; wsp::load<64, 128, wsp::Plain<float>>(v0, p_src, p_src_rs, p_src_cs);
  // %1 = store
  wsp::store<64, 128, wsp::Plain<float>>(p_buf, p_buf_rs, p_buf_cs, v0);
}
