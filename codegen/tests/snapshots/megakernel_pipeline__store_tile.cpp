extern "C" void wsp_kernel_store_tile(char* const* wsp_t, const int64_t* wsp_s, const double*) {
  float* const p_res = (float*)wsp_t[0]; const int64_t p_res_rs = wsp_s[0], p_res_cs = wsp_s[1];
  float* const p_dst = (float*)wsp_t[1]; const int64_t p_dst_rs = wsp_s[2], p_dst_cs = wsp_s[3];
  // %0 = load
  float v0[8192]; wsp::load<64, 128, wsp::Plain<float>>(v0, p_res, p_res_rs, p_res_cs);
  // %1 = store
  wsp::store<64, 128, wsp::Plain<float>>(p_dst, p_dst_rs, p_dst_cs, v0);
}
