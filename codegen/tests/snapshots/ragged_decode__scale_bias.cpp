extern "C" void wsp_kernel_scale_bias(char* const* wsp_t, const int64_t* wsp_s, const double* wsp_sc) {
  float* const p_b = (float*)wsp_t[0]; const int64_t p_b_rs = wsp_s[0], p_b_cs = wsp_s[1];
  float* const p_out = (float*)wsp_t[1]; const int64_t p_out_rs = wsp_s[2], p_out_cs = wsp_s[3];
  const float p_s = (float)wsp_sc[0]; (void)p_s;
  float v_b[1024]; wsp::load<16, 64, wsp::Plain<float>>(v_b, p_b, p_b_rs, p_b_cs);
  // %0 = mul
  float v0[1024];
  for (int i = 0; i < 16; ++i) for (int j = 0; j < 64; ++j) { const float a = v_b[i * 64 + j]; const float b = p_s; v0[i * 64 + j] = (float)(a * b); }
  // %1 = store
  wsp::store<16, 64, wsp::Plain<float>>(p_out, p_out_rs, p_out_cs, v0);
}
