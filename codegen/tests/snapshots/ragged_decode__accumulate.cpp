extern "C" void wsp_kernel_accumulate(char* const* wsp_t, const int64_t* wsp_s, const double*) {
  float* const p_kv = (float*)wsp_t[0]; const int64_t p_kv_rs = wsp_s[0], p_kv_cs = wsp_s[1];
  float* const p_acc = (float*)wsp_t[1]; const int64_t p_acc_rs = wsp_s[2], p_acc_cs = wsp_s[3];
  float v_kv[1024]; wsp::load<16, 64, wsp::Plain<float>>(v_kv, p_kv, p_kv_rs, p_kv_cs);
  // %0 = mul
  float v0[1024];
  for (int i = 0; i < 16; ++i) for (int j = 0; j < 64; ++j) { const float a = v_kv[i * 64 + j]; const float b = 0.5; v0[i * 64 + j] = (float)(a * b); }
  // %1 = exp
  float v1[1024];
  for (int i = 0; i < 16; ++i) for (int j = 0; j < 64; ++j) { const float x = v0[i * 64 + j]; v1[i * 64 + j] = (float)(wsp::exp(x)); }
  float v_acc[1024]; wsp::load<16, 64, wsp::Plain<float>>(v_acc, p_acc, p_acc_rs, p_acc_cs);
  // %2 = add
  float v2[1024];
  for (int i = 0; i < 16; ++i) for (int j = 0; j < 64; ++j) { const float a = v_acc[i * 64 + j]; const float b = v1[i * 64 + j]; v2[i * 64 + j] = (float)(a + b); }
  // %3 = store
  wsp::store<16, 64, wsp::Plain<float>>(p_acc, p_acc_rs, p_acc_cs, v2);
}
