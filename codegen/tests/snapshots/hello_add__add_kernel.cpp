extern "C" void wsp_kernel_add_kernel(char* const* wsp_t, const int64_t* wsp_s, const double*) {
  float* const p_a = (float*)wsp_t[0]; const int64_t p_a_rs = wsp_s[0], p_a_cs = wsp_s[1];
  float* const p_b = (float*)wsp_t[1]; const int64_t p_b_rs = wsp_s[2], p_b_cs = wsp_s[3];
  float* const p_c = (float*)wsp_t[2]; const int64_t p_c_rs = wsp_s[4], p_c_cs = wsp_s[5];
  // %0 = load
  float v0[1024]; wsp::load<32, 32, wsp::Plain<float>>(v0, p_a, p_a_rs, p_a_cs);
  // %1 = load
  float v1[1024]; wsp::load<32, 32, wsp::Plain<float>>(v1, p_b, p_b_rs, p_b_cs);
  // %2 = add
  float v2[1024];
  for (int i = 0; i < 32; ++i) for (int j = 0; j < 32; ++j) { const float a = v0[i * 32 + j]; const float b = v1[i * 32 + j]; v2[i * 32 + j] = (float)(a + b); }
  // %3 = store
  wsp::store<32, 32, wsp::Plain<float>>(p_c, p_c_rs, p_c_cs, v2);
}
