extern "C" void wsp_kernel_compute_tile(char* const* wsp_t, const int64_t* wsp_s, const double*) {
  float* const p_buf = (float*)wsp_t[0]; const int64_t p_buf_rs = wsp_s[0], p_buf_cs = wsp_s[1];
  float* const p_res = (float*)wsp_t[1]; const int64_t p_res_rs = wsp_s[2], p_res_cs = wsp_s[3];
  // %0 = constant
  const float v0 = (float)0.5;
  float v_buf[8192]; wsp::load<64, 128, wsp::Plain<float>>(v_buf, p_buf, p_buf_rs, p_buf_cs);
  // %1 = mul
  float v1[8192];
  for (int i = 0; i < 64; ++i) for (int j = 0; j < 128; ++j) { const float a = v_buf[i * 128 + j]; const float b = v0; v1[i * 128 + j] = (float)(a * b); }
  // %2 = gelu
  float v2[8192];
  for (int i = 0; i < 64; ++i) for (int j = 0; j < 128; ++j) { const float x = v1[i * 128 + j]; v2[i * 128 + j] = (float)(x / (1 + wsp::exp(x * (-1.5957691216f - 0.0713548163f * (x * x))))); }
  // %3 = store
  wsp::store<64, 128, wsp::Plain<float>>(p_res, p_res_rs, p_res_cs, v2);
}
