extern "C" void wsp_kernel_rmsnorm_tile(char* const* wsp_t, const int64_t* wsp_s, const double* wsp_sc) {
  float* const p_x = (float*)wsp_t[0]; const int64_t p_x_rs = wsp_s[0], p_x_cs = wsp_s[1];
  float* const p_out = (float*)wsp_t[1]; const int64_t p_out_rs = wsp_s[2], p_out_cs = wsp_s[3];
  const float p_eps = (float)wsp_sc[0]; (void)p_eps;
  float v_x[2048]; wsp::load<16, 128, wsp::Plain<float>>(v_x, p_x, p_x_rs, p_x_cs);
  // %0 = mul
  float v0[2048];
  for (int i = 0; i < 16; ++i) for (int j = 0; j < 128; ++j) { const float a = v_x[i * 128 + j]; const float b = v_x[i * 128 + j]; v0[i * 128 + j] = (float)(a * b); }
  // %1 = rowmean
  float v1[16];
  for (int i = 0; i < 16; ++i) v1[i] = wsp::reduce_row<128>(v0 + i * 128, (float)0, [](const float acc, const float x) { return (float)(acc + x); }) / (float)128;
  // %2 = add
  float v2[16];
  for (int i = 0; i < 16; ++i) for (int j = 0; j < 1; ++j) { const float a = v1[i * 1 + 0]; const float b = p_eps; v2[i * 1 + j] = (float)(a + b); }
  // %3 = rsqrt
  float v3[16];
  for (int i = 0; i < 16; ++i) for (int j = 0; j < 1; ++j) { const float x = v2[i * 1 + 0]; v3[i * 1 + j] = (float)(1 / wsp::sqrt(x)); }
  // %4 = rowmul
  float v4[2048];
  for (int i = 0; i < 16; ++i) for (int j = 0; j < 128; ++j) { const float a = v_x[i * 128 + j]; const float b = v3[i * 1 + 0]; v4[i * 128 + j] = (float)(a * b); }
  // %5 = store
  wsp::store<16, 128, wsp::Plain<float>>(p_out, p_out_rs, p_out_cs, v4);
}
