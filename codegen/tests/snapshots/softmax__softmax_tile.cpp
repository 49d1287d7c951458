extern "C" void wsp_kernel_softmax_tile(char* const* wsp_t, const int64_t* wsp_s, const double*) {
  float* const p_x = (float*)wsp_t[0]; const int64_t p_x_rs = wsp_s[0], p_x_cs = wsp_s[1];
  float* const p_y = (float*)wsp_t[1]; const int64_t p_y_rs = wsp_s[2], p_y_cs = wsp_s[3];
  float v_x[16384]; wsp::load<64, 256, wsp::Plain<float>>(v_x, p_x, p_x_rs, p_x_cs);
  // %0 = rowmax
  float v0[64];
  for (int i = 0; i < 64; ++i) v0[i] = wsp::reduce_row<256>(v_x + i * 256, wsp::lowest<float>(), [](const float acc, const float x) { return (float)((x > acc ? x : acc)); });
  // %1 = sub
  float v1[16384];
  for (int i = 0; i < 64; ++i) for (int j = 0; j < 256; ++j) { const float a = v_x[i * 256 + j]; const float b = v0[i * 1 + 0]; v1[i * 256 + j] = (float)(a - b); }
  // %2 = exp
  float v2[16384];
  for (int i = 0; i < 64; ++i) for (int j = 0; j < 256; ++j) { const float x = v1[i * 256 + j]; v2[i * 256 + j] = (float)(wsp::exp(x)); }
  // %3 = rowsum
  float v3[64];
  for (int i = 0; i < 64; ++i) v3[i] = wsp::reduce_row<256>(v2 + i * 256, (float)0, [](const float acc, const float x) { return (float)(acc + x); });
  // %4 = div
  float v4[16384];
  for (int i = 0; i < 64; ++i) for (int j = 0; j < 256; ++j) { const float a = v2[i * 256 + j]; const float b = v3[i * 1 + 0]; v4[i * 256 + j] = (float)(a / b); }
  // %5 = store
  wsp::store<64, 256, wsp::Plain<float>>(p_y, p_y_rs, p_y_cs, v4);
}
