extern "C" void wsp_kernel_bias_gelu__16x128_f32__16x1_f32__16x128_f32(char* const* wsp_t, const int64_t* wsp_s, const double*) {
  float* const p_x = (float*)wsp_t[0]; const int64_t p_x_rs = wsp_s[0], p_x_cs = wsp_s[1];
  float* const p_bias = (float*)wsp_t[1]; const int64_t p_bias_rs = wsp_s[2], p_bias_cs = wsp_s[3];
  float* const p_y = (float*)wsp_t[2]; const int64_t p_y_rs = wsp_s[4], p_y_cs = wsp_s[5];
  float v_x[2048]; wsp::load<16, 128, wsp::Plain<float>>(v_x, p_x, p_x_rs, p_x_cs);
  float v_bias[16]; wsp::load<16, 1, wsp::Plain<float>>(v_bias, p_bias, p_bias_rs, p_bias_cs);
  // %0 = rowadd
  float v0[2048];
  for (int i = 0; i < 16; ++i) for (int j = 0; j < 128; ++j) { const float a = v_x[i * 128 + j]; const float b = v_bias[i * 1 + 0]; v0[i * 128 + j] = (float)(a + b); }
  // %1 = gelu
  float v1[2048];
  for (int i = 0; i < 16; ++i) for (int j = 0; j < 128; ++j) { const float x = v0[i * 128 + j]; v1[i * 128 + j] = (float)(x / (1 + wsp::exp(x * (-1.5957691216f - 0.0713548163f * (x * x))))); }
  // %2 = store
  wsp::store<16, 128, wsp::Plain<float>>(p_y, p_y_rs, p_y_cs, v1);
}
