extern "C" void wsp_kernel_bias_gelu(char* const* wsp_t, const int64_t* wsp_s, const double*) {
  float* const p_y = (float*)wsp_t[0]; const int64_t p_y_rs = wsp_s[0], p_y_cs = wsp_s[1];
  float* const p_bias = (float*)wsp_t[1]; const int64_t p_bias_rs = wsp_s[2], p_bias_cs = wsp_s[3];
  float* const p_out = (float*)wsp_t[2]; const int64_t p_out_rs = wsp_s[4], p_out_cs = wsp_s[5];
  float v_y[8192]; wsp::load<64, 128, wsp::Plain<float>>(v_y, p_y, p_y_rs, p_y_cs);
  float v_bias[128]; wsp::load<1, 128, wsp::Plain<float>>(v_bias, p_bias, p_bias_rs, p_bias_cs);
  // %0 = add
  float v0[8192];
  for (int i = 0; i < 64; ++i) for (int j = 0; j < 128; ++j) { const float a = v_y[i * 128 + j]; const float b = v_bias[0 + j]; v0[i * 128 + j] = (float)(a + b); }
  // %1 = gelu
  float v1[8192];
  for (int i = 0; i < 64; ++i) for (int j = 0; j < 128; ++j) { const float x = v0[i * 128 + j]; v1[i * 128 + j] = (float)(x / (1 + wsp::exp(x * (-1.5957691216f - 0.0713548163f * (x * x))))); }
  // %2 = store
  wsp::store<64, 128, wsp::Plain<float>>(p_out, p_out_rs, p_out_cs, v1);
}
