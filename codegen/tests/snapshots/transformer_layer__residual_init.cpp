extern "C" void wsp_kernel_residual_init(char* const* wsp_t, const int64_t* wsp_s, const double*) {
  float* const p_x = (float*)wsp_t[0]; const int64_t p_x_rs = wsp_s[0], p_x_cs = wsp_s[1];
  float* const p_h = (float*)wsp_t[1]; const int64_t p_h_rs = wsp_s[2], p_h_cs = wsp_s[3];
  // %0 = load
  float v0[8192]; wsp::load<64, 128, wsp::Plain<float>>(v0, p_x, p_x_rs, p_x_cs);
  // %1 = store
  wsp::store<64, 128, wsp::Plain<float>>(p_h, p_h_rs, p_h_cs, v0);
}
