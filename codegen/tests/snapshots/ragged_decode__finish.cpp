extern "C" void wsp_kernel_finish(char* const* wsp_t, const int64_t* wsp_s, const double*) {
  float* const p_acc = (float*)wsp_t[0]; const int64_t p_acc_rs = wsp_s[0], p_acc_cs = wsp_s[1];
  float* const p_bias = (float*)wsp_t[1]; const int64_t p_bias_rs = wsp_s[2], p_bias_cs = wsp_s[3];
  float* const p_out = (float*)wsp_t[2]; const int64_t p_out_rs = wsp_s[4], p_out_cs = wsp_s[5];
  float v_acc[1024]; wsp::load<16, 64, wsp::Plain<float>>(v_acc, p_acc, p_acc_rs, p_acc_cs);
  // %0 = rowsum
  float v0[16];
  for (int i = 0; i < 16; ++i) v0[i] = wsp::reduce_row<64>(v_acc + i * 64, (float)0, [](const float acc, const float x) { return (float)(acc + x); });
  // %1 = div
  float v1[1024];
  for (int i = 0; i < 16; ++i) for (int j = 0; j < 64; ++j) { const float a = v_acc[i * 64 + j]; const float b = v0[i * 1 + 0]; v1[i * 64 + j] = (float)(a / b); }
  float v_bias[1024]; wsp::load<16, 64, wsp::Plain<float>>(v_bias, p_bias, p_bias_rs, p_bias_cs);
  // %2 = add
  float v2[1024];
  for (int i = 0; i < 16; ++i) for (int j = 0; j < 64; ++j) { const float a = v1[i * 64 + j]; const float b = v_bias[i * 64 + j]; v2[i * 64 + j] = (float)(a + b); }
  // %3 = store
  wsp::store<16, 64, wsp::Plain<float>>(p_out, p_out_rs, p_out_cs, v2);
}
